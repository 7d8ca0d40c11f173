# Cross-compiling onnxrun for s390x Linux with Debian's cross gcc (gcc-s390x-linux-gnu) and multiarch
# libraries (libprotobuf-c-dev:ARCH, libcmocka-dev:ARCH); see docs/platforms.md.
#   cmake -S . -B build-s390x -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/s390x-linux-gnu.cmake
# protoc-c is the build machine's (it generates C source). CTest runs the tests through
# qemu-user (-DCMAKE_CROSSCOMPILING_EMULATOR="..." replaces it): -L / makes qemu load the multiarch loader and libc from /lib (the cross
# toolchain's copy under /usr/s390x-linux-gnu mixed with the multiarch libc hangs pthread_create).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR "qemu-s390x;-L;/" CACHE STRING "runs target programs (tests)")
# pkg-config looks only at the target's .pc files
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/s390x-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
