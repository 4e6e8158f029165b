# syntax=docker/dockerfile:1
# ctxgraph server image: `docker build -t ctxgraph .` (docker-compose.yml uses it).

FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOOS=linux
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/ctxgraph ./cmd/ctxgraph
# Blob directory, owned by the runtime image's non-root user (65532), so that a fresh named
# volume mounted on /data/blobs starts out writable by it.
RUN mkdir -p /out/data/blobs

# Small runtime: static binary, CA certificates, tzdata, non-root user; no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ctxgraph /usr/local/bin/ctxgraph
COPY --from=build --chown=65532:65532 /out/data /data
ENV CTXGRAPH_ADDR=0.0.0.0:8080 \
    CTXGRAPH_BLOB_DIR=/data/blobs
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/ctxgraph"]
