# syntax=docker/dockerfile:1
#
# lease-exporter container image. The binary is built by hack/build.sh, the
# same script CI and people use, so the image holds exactly the release build
# (static, -trimpath, stripped, version-stamped).
#
# .git is not part of the build context (.dockerignore), so pass the version:
#   docker build \
#     --build-arg VERSION="$(git describe --tags --always --dirty | sed 's/^v//')" \
#     --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg BRANCH="$(git rev-parse --abbrev-ref HEAD)" \
#     --build-arg BUILD_DATE="$(date -u +%Y%m%d-%H:%M:%S)" \
#     --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
#     -t lease-exporter .
# Without them the binary reports "unknown". Multi-arch: docker buildx build
# --platform linux/amd64,linux/arm64 ... cross-compiles on the build host.

ARG GO_IMAGE=golang:1.26
# The runtime base. Only a build that cannot pull it (hack/image/build.sh, on machines without
# a registry) passes a local stand-in here.
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS builder
ARG TARGETOS
ARG TARGETARCH
ARG VERSION
ARG REVISION
ARG BRANCH
ARG BUILD_DATE
WORKDIR /src
# Dependencies first, so a source-only change reuses this layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS="${TARGETOS:-linux}" GOARCH="${TARGETARCH}" \
    VERSION="${VERSION}" REVISION="${REVISION}" BRANCH="${BRANCH}" \
    BUILD_DATE="${BUILD_DATE}" BUILD_USER="docker" \
    ./hack/build.sh /out/lease-exporter

# distroless static: no shell, no libc, CA certificates and tzdata only; the
# nonroot variant's user is 65532, repeated numerically below so that
# Kubernetes' runAsNonRoot can verify it without resolving names.
FROM ${BASE_IMAGE}
ARG VERSION
ARG REVISION
# RFC 3339, as the OCI annotation wants (BUILD_DATE is Prometheus' format).
ARG CREATED
LABEL org.opencontainers.image.title="lease-exporter" \
      org.opencontainers.image.description="Prometheus exporter for Kubernetes Lease and leader-election health" \
      org.opencontainers.image.url="https://github.com/lease-exporter/lease-exporter" \
      org.opencontainers.image.source="https://github.com/lease-exporter/lease-exporter" \
      org.opencontainers.image.documentation="https://github.com/lease-exporter/lease-exporter/blob/main/docs/deploy.md" \
      org.opencontainers.image.vendor="lease-exporter" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=builder /out/lease-exporter /bin/lease-exporter
USER 65532:65532
EXPOSE 10047
ENTRYPOINT ["/bin/lease-exporter"]
