# Cross-compiling onnxrun for i686 Linux with Debian's cross gcc (gcc-i686-linux-gnu) and multiarch
# libraries (libprotobuf-c-dev:ARCH, libcmocka-dev:ARCH); see docs/platforms.md.
#   cmake -S . -B build-i386 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/i686-linux-gnu.cmake
# protoc-c is the build machine's (it generates C source). CTest runs the tests through
# qemu-user (-DCMAKE_CROSSCOMPILING_EMULATOR="..." replaces it): -L / makes qemu load the multiarch loader and libc from /lib (the cross
# toolchain's copy under /usr/i686-linux-gnu mixed with the multiarch libc hangs pthread_create).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(CMAKE_C_COMPILER i686-linux-gnu-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR "qemu-i386;-L;/" CACHE STRING "runs target programs (tests)")
# pkg-config looks only at the target's .pc files
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
