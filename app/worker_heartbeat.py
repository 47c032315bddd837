"""Worker liveness: each worker refreshes its score in a Redis sorted set and names the queues it
consumes in a hash; /readyz reads both."""

from __future__ import annotations

import logging
import threading
import time

import redis

log = logging.getLogger(__name__)

HEARTBEAT_KEY = "hindsight:workers"
WORKER_QUEUES_KEY = "hindsight:worker_queues"  # worker name -> "distill,resolve"


class Heartbeat:
    def __init__(self, redis_url: str, name: str, interval: float, queues: tuple[str, ...] = ()) -> None:
        self._client = redis.Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=2)
        self._name = name
        self._queues = ",".join(queues)
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hindsight-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        try:
            self._client.zrem(HEARTBEAT_KEY, self._name)
            self._client.hdel(WORKER_QUEUES_KEY, self._name)
        except redis.RedisError:
            pass

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                # Both on every beat: a Redis that restarted empty learns them again.
                with self._client.pipeline() as pipe:
                    pipe.hset(WORKER_QUEUES_KEY, self._name, self._queues)
                    pipe.zadd(HEARTBEAT_KEY, {self._name: time.time()})
                    pipe.execute()
            except redis.RedisError as exc:
                log.warning("heartbeat failed: %s", exc)
            self._stop.wait(self._interval)
