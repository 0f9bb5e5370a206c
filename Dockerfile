# Northstar in a container: Debian's headless Chromium and Northstar in a virtualenv,
# run as an unprivileged user. Build from a checkout, then run any `northstar` command:
#
#   docker build -t northstar .
#   docker run --rm -v "$PWD:/work" northstar run recipes/contact-form.yaml \
#       --base-url http://host.docker.internal:8000 -p name=Ada
#
# The journal is /work/.northstar/journal.db unless NORTHSTAR_JOURNAL says otherwise, so
# mounting the project at /work keeps it. `--cdp-url` / `--ws-endpoint` drive a browser
# in another container instead of this one's.
FROM debian:trixie-slim

# Chromium's headless shell is what headless runs launch (found on PATH, as on a host) (several times less CPU per page
# than the full browser); fonts so that pages render text. Versions follow the Debian
# release the image is built from, as security updates to Chromium require.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        chromium-headless-shell fonts-liberation python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/*

ENV VIRTUAL_ENV=/opt/northstar \
    PATH=/opt/northstar/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# Only what the package is built from (see .dockerignore): a source change rebuilds this.
COPY pyproject.toml README.md /src/
COPY northstar /src/northstar
COPY browser_adapters /src/browser_adapters
RUN python3 -m venv "$VIRTUAL_ENV" \
    && "$VIRTUAL_ENV/bin/pip" install --no-cache-dir --disable-pip-version-check "/src[mcp,distributed]" \
    && rm -rf /src

RUN useradd --create-home --uid 10001 northstar \
    && mkdir -p /work \
    && chown northstar:northstar /work
USER 10001:10001
WORKDIR /work

ENTRYPOINT ["northstar"]
CMD ["--help"]
