"""Python client of Hindsight, agent memory as a service: `Hindsight` (sync) and `AsyncHindsight`
(async) over the HTTP API, pydantic models, exceptions from problem+json, and the agent loop
`memory_session`. Agent-framework tools live in `hindsight_memory.integrations`."""

from hindsight_memory import _errors, _graph_models, _models
from hindsight_memory._async_client import AsyncHindsight
from hindsight_memory._client import Hindsight
from hindsight_memory._config import VERSION as __version__
from hindsight_memory._errors import *  # noqa: F403 (the exceptions, as `_errors.__all__` names them)
from hindsight_memory._graph_models import *  # noqa: F403 (as `_graph_models.__all__` names them)
from hindsight_memory._models import *  # noqa: F403 (the models, as `_models.__all__` names them)
from hindsight_memory._session import AsyncMemorySession, MemorySession

__all__ = [
    "AsyncHindsight",
    "AsyncMemorySession",
    "Hindsight",
    "MemorySession",
    "__version__",
]
__all__ += _errors.__all__
__all__ += _models.__all__
__all__ += _graph_models.__all__
