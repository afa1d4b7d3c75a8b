# syntax=docker/dockerfile:1
#
# The ringactor binary in a container: `docker build -t ringactor .`
#
# The build stage compiles with cgo (the CUDA driver and NVRTC are loaded
# with dlopen at run time, so no CUDA SDK is needed to build). The runtime
# stage is NVIDIA's CUDA runtime image: it carries NVRTC (libnvrtc), which
# compiles users' device ring kernels at run time. The driver library
# (libcuda.so.1) is not in the image: the NVIDIA container runtime mounts
# the host's driver into GPU pods (deploy/overlays/gpu). On a node without
# a GPU the same image runs every kernel on the CPU.

ARG GO_VERSION=1.26
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-runtime-ubuntu24.04

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -buildvcs=false -o /out/ringactor ./cmd/ringactor

FROM ${CUDA_IMAGE} AS runtime
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    CUDA_MODULE_LOADING=EAGER \
    XDG_CACHE_HOME=/tmp/cache
COPY --from=build /out/ringactor /usr/local/bin/ringactor
# 65532: an unprivileged user with no login (distroless' "nonroot").
USER 65532:65532
# 6000: the member's remote (gRPC); 9090: the admin endpoint (probes, /metrics).
EXPOSE 6000 9090
ENTRYPOINT ["/usr/local/bin/ringactor"]
CMD ["serve"]
