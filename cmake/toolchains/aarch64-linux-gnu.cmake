# Cross-compiling onnxrun for aarch64 Linux with Debian's cross gcc (gcc-aarch64-linux-gnu) and multiarch
# libraries (libprotobuf-c-dev:ARCH, libcmocka-dev:ARCH); see docs/platforms.md.
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# protoc-c is the build machine's (it generates C source). CTest runs the tests through
# qemu-user (-DCMAKE_CROSSCOMPILING_EMULATOR="..." replaces it): -L / makes qemu load the multiarch loader and libc from /lib (the cross
# toolchain's copy under /usr/aarch64-linux-gnu mixed with the multiarch libc hangs pthread_create).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR "qemu-aarch64;-L;/" CACHE STRING "runs target programs (tests)")
# pkg-config looks only at the target's .pc files
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
