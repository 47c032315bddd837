"""The command line's ports: read by the verb that listens only, from its variables or --port (1-65535);
a Kubernetes service link in those variables (a Service named hindsight-api sets HINDSIGHT_API_PORT to
`tcp://…`) stops no verb."""

from __future__ import annotations

import pytest

from app.cli import _env_port, build_parser


def test_a_service_link_in_the_port_variables_stops_no_verb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_API_PORT", "tcp://10.96.0.12:8000")
    monkeypatch.setenv("HINDSIGHT_PORT", "tcp://10.96.0.13:8000")
    for argv in (["migrate"], ["worker"], ["beat"], ["api"], ["dev"]):
        assert build_parser().parse_args(argv).verb == argv[0]
    assert _env_port("HINDSIGHT_API_PORT", "HINDSIGHT_PORT") == 8000


def test_the_api_port_comes_from_its_variable_then_the_shared_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HINDSIGHT_API_PORT", raising=False)
    monkeypatch.setenv("HINDSIGHT_PORT", "9100")
    assert _env_port("HINDSIGHT_API_PORT", "HINDSIGHT_PORT") == 9100
    monkeypatch.setenv("HINDSIGHT_API_PORT", "9200")
    assert _env_port("HINDSIGHT_API_PORT", "HINDSIGHT_PORT") == 9200
    monkeypatch.setenv("HINDSIGHT_API_PORT", "eighty")
    with pytest.raises(SystemExit, match="HINDSIGHT_API_PORT"):
        _env_port("HINDSIGHT_API_PORT", "HINDSIGHT_PORT")


@pytest.mark.parametrize("port", ["0", "70000", "x"])
def test_a_port_out_of_range_is_refused_by_the_parser(port: str) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["dev", "--port", port])
    assert build_parser().parse_args(["api", "--port", "8080"]).port == 8080
