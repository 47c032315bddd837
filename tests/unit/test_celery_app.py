from __future__ import annotations

from app.config import Settings
from app.jobs.queue import QUEUES, queue_for
from worker.factory import create_celery


def test_each_queue_has_its_own_exchange_and_late_acks() -> None:
    conf = create_celery(Settings(env="test")).conf
    bindings = {q.name: (q.exchange.name, q.routing_key) for q in conf.task_queues}
    assert bindings == {name: (name, name) for name in QUEUES}
    assert conf.task_acks_late
    assert conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.beat_schedule["sweep"]["task"] == "maintenance.sweep"


def test_task_names_route_to_their_domain_queue_and_replays_to_their_own() -> None:
    assert queue_for("distill.session") == "distill"
    assert queue_for("resolve.bank") == "resolve"
    assert queue_for("maintenance.sweep") == "maintenance"
    assert queue_for("distill.redistill") == "replay"  # a whole bank's replay is not new work
    router = create_celery(Settings(env="test")).amqp.router
    for kind in ("distill.session", "distill.redistill", "resolve.bank", "maintenance.merge"):
        assert router.route({}, kind)["queue"].name == queue_for(kind), kind


def test_every_scheduled_and_admin_task_is_a_registered_task_on_the_maintenance_queue() -> None:
    from typing import get_args

    import worker.tasks  # noqa: F401  (registers the tasks)
    from app.api.jobs import MaintenanceTask
    from worker.beat import BEAT_SCHEDULE

    celery = create_celery(Settings(env="test"))
    celery.loader.import_default_modules()
    scheduled = {entry["task"] for entry in BEAT_SCHEDULE.values()} - {"webhooks.deliver"}
    admin = {f"maintenance.{task}" for task in get_args(MaintenanceTask)}
    assert scheduled <= admin
    assert admin <= set(celery.tasks)
    assert {queue_for(task) for task in admin} == {"maintenance"}
    assert {"distill.session", "distill.redistill", "resolve.bank"} <= set(celery.tasks)


def test_webhook_deliveries_have_a_queue_and_a_beat_tick_of_their_own() -> None:
    import worker.tasks  # noqa: F401  (registers the tasks)
    from worker.beat import BEAT_SCHEDULE

    celery = create_celery(Settings(env="test"))
    celery.loader.import_default_modules()
    assert "webhooks.deliver" in celery.tasks
    assert queue_for("webhooks.deliver") == "webhooks"
    assert celery.amqp.router.route({}, "webhooks.deliver")["queue"].name == "webhooks"
    assert BEAT_SCHEDULE["webhooks"]["options"] == {"queue": "webhooks"}
