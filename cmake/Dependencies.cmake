# Third-party dependencies, all from Debian 12 packages (scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)                 # libfmt-dev
find_package(nlohmann_json 3.11 REQUIRED)  # nlohmann-json3-dev
find_package(CLI11 REQUIRED)               # libcli11-dev
find_package(Catch2 2 REQUIRED)            # catch2 (v2, header-only on Debian 12)
pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)  # libibverbs-dev
pkg_check_modules(MLX5    REQUIRED IMPORTED_TARGET libmlx5)     # libibverbs-dev (mlx5dv)
pkg_check_modules(RDMACM  REQUIRED IMPORTED_TARGET librdmacm)   # librdmacm-dev
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)  # libseccomp-dev

# CUDA headers are optional: GPU-facing code compiles its CUDA paths only when found.
find_path(RDMAPROXY_CUDA_INCLUDE_DIR cuda.h
          PATHS /usr/local/cuda/include /usr/include)
if(RDMAPROXY_CUDA_INCLUDE_DIR)
  message(STATUS "rdmaproxy: CUDA headers found in ${RDMAPROXY_CUDA_INCLUDE_DIR}")
else()
  message(STATUS "rdmaproxy: CUDA headers not found (GPU paths compiled out)")
endif()
