# Bare-metal onnxrun for an Arm Cortex-M55 (ARMv8.1-M with Helium, MVE, and a double-precision
# FPU) with Debian's gcc-arm-none-eabi and libnewlib-arm-none-eabi; see docs/platforms.md, Microcontrollers.
#   cmake -S . -B build-m55 -DCMAKE_TOOLCHAIN_FILE=$PWD/cmake/toolchains/cortex-m55.cmake \
#       -DONNXRUN_PROTOBUFC_LIBRARY=... -DONNXRUN_PROTOBUFC_INCLUDE_DIR=...
# Selects src/platform/baremetal.c (no OS: one thread, no files, no heap), builds the static
# library and, with the startup code and linker script of targets/cortex-m/ for the board
# named by ONNXRUN_MCU_BOARD (qemu's mps3-an547 here), the tests and examples as firmware
# that CTest runs under qemu-system-arm with semihosting. protobuf-c for the target comes
# from Debian's source package (.ci/mcu_deps.sh).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar CACHE FILEPATH "")
set(CMAKE_RANLIB arm-none-eabi-ranlib CACHE FILEPATH "")
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "")
# try_compile builds a library: a bare-metal program cannot link without a startup and script
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(ONNXRUN_MCU_CPU_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
set(CMAKE_C_FLAGS_INIT "${ONNXRUN_MCU_CPU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${ONNXRUN_MCU_CPU_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${ONNXRUN_MCU_CPU_FLAGS} -Wl,--gc-sections")
set(ONNXRUN_BAREMETAL ON CACHE BOOL "bare-metal build (src/platform/baremetal.c)")
set(ONNXRUN_MCU_BOARD mps3-an547 CACHE STRING "board of the firmware: targets/cortex-m/<board>.ld")
set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/../../targets/cortex-m/qemu-run.sh;mps3-an547"
  CACHE STRING "runs a firmware (the tests): qemu-system-arm with semihosting")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} /nonexistent)
set(ENV{PKG_CONFIG_PATH} "")
