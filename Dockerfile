# syntax=docker/dockerfile:1
# serializerd in a container: built with the official Swift image, run on slim Debian of
# the same release (the dynamically linked libevent, libcurl, OpenSSL, libxml2 and RE2 must match).
ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libevent-dev libcurl4-openssl-dev libssl-dev libxml2-dev libre2-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so source edits do not re-fetch them.
COPY Package.swift ./
RUN swift package resolve
# Every target's folder must exist for the manifest to load, tests and bench included.
COPY Sources ./Sources
COPY Tests ./Tests
COPY bench ./bench
RUN swift build -c release --static-swift-stdlib --product serializerd \
 && install -D -m 0755 "$(swift build -c release --show-bin-path)/serializerd" /out/serializerd \
 && strip /out/serializerd

FROM ${RUNTIME_IMAGE}
# Only the runtime libraries the binary links (ldd): Swift's own are linked statically.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libevent-2.1-7 libcurl4 libssl3 libxml2 libre2-9 ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin serializerd
COPY --from=build /out/serializerd /usr/local/bin/serializerd
COPY config/serializerd.yaml /etc/serializerd/serializerd.yaml
USER 10001:10001
# 127.0.0.1 is unreachable through published ports; the environment beats the file.
ENV SERIALIZERD_LISTEN=0.0.0.0:8080
EXPOSE 8080
# No port here: healthcheck asks the address serve listens on (SERIALIZERD_LISTEN, else the
# config's listen), so `-e SERIALIZERD_LISTEN=0.0.0.0:9090` stays healthy.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/serializerd", "healthcheck", "--config", "/etc/serializerd/serializerd.yaml"]
# Exec form: the daemon is PID 1 and drains on SIGTERM itself (docker stop -t ≥ shutdown_grace).
ENTRYPOINT ["/usr/local/bin/serializerd"]
CMD ["serve", "--config", "/etc/serializerd/serializerd.yaml"]
