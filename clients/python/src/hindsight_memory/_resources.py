"""The resources of both clients (`hs.banks`, `hs.memories`, …) and the client-level methods, written
once as a table: each public method names the plan of `_operations.Operations` it runs (its signature
and docstring are the public ones); `_surface` makes it sync or async."""

from __future__ import annotations

from typing import Generic, TypeVar

from hindsight_memory._config import ClientConfig
from hindsight_memory._operations import Operations as Ops
from hindsight_memory._plans import Target
from hindsight_memory._surface import Driver, Mode, Resource, listing, operation

Http = TypeVar("Http")


class Banks(Resource[Mode]):
    create = operation(Ops.create_bank)
    get = operation(Ops.get_bank)
    list = listing(Ops.bank_pages)
    update = operation(Ops.update_bank)
    delete = operation(Ops.delete_bank)
    stats = operation(Ops.bank_stats)
    export = operation(Ops.export_bank)
    import_ = operation(Ops.import_bank)


class Keys(Resource[Mode]):
    create = operation(Ops.create_key)
    revoke = operation(Ops.revoke_key)


class Events(Resource[Mode]):
    append = operation(Ops.append)
    list = listing(Ops.event_pages)


class Sessions(Resource[Mode]):
    get = operation(Ops.get_session)
    list = listing(Ops.session_pages)
    close = operation(Ops.close_session)
    distill = operation(Ops.distill_session)


class Jobs(Resource[Mode]):
    get = operation(Ops.get_job)
    wait = operation(Ops.wait_job)


class Memories(Resource[Mode]):
    write = operation(Ops.write_memory)
    list = listing(Ops.memory_pages)
    get = operation(Ops.get_memory)
    history = operation(Ops.memory_history)
    update = operation(Ops.update_memory)
    forget = operation(Ops.forget_memory)
    restore = operation(Ops.restore_memory)
    purge = operation(Ops.purge_memory)
    # shared memory: proposals of propose-only keys, reviewed with a `review` key
    proposals = listing(Ops.proposal_pages)
    accept = operation(Ops.accept_memory)
    reject = operation(Ops.reject_memory)


class Entities(Resource[Mode]):
    list = listing(Ops.entity_pages)
    get = operation(Ops.get_entity)


class ClientMethods(Resource[Mode], Generic[Mode, Http]):
    """What `Hindsight` and `AsyncHindsight` share: the constructor, the resources and the client-level
    calls. `base_url` / `api_key` / `agent_id` default to $HINDSIGHT_URL / $HINDSIGHT_API_KEY /
    $HINDSIGHT_AGENT_ID; 429, 503 and connection failures are retried up to `max_retries` times.
    `agent_id`: the agent this client writes as, when its key names none (the `X-Agent-Id` header)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        *,
        http_client: Http | None = None,
        agent_id: str | None = None,
    ) -> None:
        config = ClientConfig.resolve(base_url, api_key, timeout, max_retries, agent_id)
        self._owns_http = http_client is None
        self._http = http_client or self._open(timeout)
        driver = self._driver_for(self._http, Target(config.base_url, config.headers), max_retries)
        super().__init__(driver)
        self._config = config
        self.banks: Banks[Mode] = Banks(driver)
        self.keys: Keys[Mode] = Keys(driver)
        self.events: Events[Mode] = Events(driver)
        self.sessions: Sessions[Mode] = Sessions(driver)
        self.jobs: Jobs[Mode] = Jobs(driver)
        self.memories: Memories[Mode] = Memories(driver)
        self.entities: Entities[Mode] = Entities(driver)

    def _open(self, timeout: float) -> Http:
        raise NotImplementedError

    def _driver_for(self, http: Http, target: Target, max_retries: int) -> Driver[Mode]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return self._config.base_url

    query = operation(Ops.query)
    timeline = listing(Ops.timeline_pages)
    redistill = operation(Ops.redistill)
