# cmake -DIN=x.js -DOUT=x.mjs -P esm_wrap.cmake: emscripten's classic MODULARIZE script as an
# ES module (its factory as the default export), for js/onnxrun.mjs to import. emscripten
# 3.1.6's own ES module output cannot be loaded by its pthread workers (importScripts), so
# both forms come from the one classic script.
file(READ "${IN}" _src)
file(WRITE "${OUT}" "${_src}\nexport default createOnnxrunModule;\n")
