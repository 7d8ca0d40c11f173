# Cross-compiling onnxrun for 64-bit Windows with Debian's MinGW-w64 gcc (gcc-mingw-w64-x86-64,
# the win32 thread model: the library uses Windows threads itself, src/platform/win32.c); see
# docs/platforms.md. protobuf-c and cmocka have no MinGW package: .ci/windows.sh builds them
# from Debian's source packages and passes ONNXRUN_PROTOBUFC_* / ONNXRUN_CMOCKA_*.
#   cmake -S . -B build-windows -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/x86_64-w64-mingw32.cmake ...
# Builds onnxrun.dll + libonnxrun.dll.a (import library), libonnxrun.a and onnxrun.exe.
# protoc-c is the build machine's (it generates C source). CTest runs the tests through wine
# (-DCMAKE_CROSSCOMPILING_EMULATOR="..." replaces it).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR "/usr/lib/wine/wine64" CACHE STRING "runs target programs (tests)")
# MinGW's C99 printf and scanf (%zu, %lld, %Lf) instead of the Microsoft C runtime's.
add_compile_definitions(__USE_MINGW_ANSI_STDIO=1)
# The Windows x64 ABI keeps the stack 16-byte aligned and gcc does not realign it for the
# 32- and 64-byte vectors of the AVX2/AVX-512 kernels it spills there: the assembler writes
# unaligned vector moves instead of aligned ones (same speed on aligned data).
add_compile_options(-Wa,-muse-unaligned-vector-move)
# The programs need no MinGW DLL next to them.
add_link_options(-static-libgcc)
# pkg-config sees no host .pc file
set(ENV{PKG_CONFIG_LIBDIR} /usr/x86_64-w64-mingw32/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
