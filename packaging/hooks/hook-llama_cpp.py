"""llama-cpp-python loads its native libraries with ctypes from ``llama_cpp/lib/``
(libllama, libggml-base, libggml-cpu, libggml, libmtmd): PyInstaller cannot see
a ctypes load, so they are collected here, at the same place under the package."""

from PyInstaller.utils.hooks import collect_data_files, collect_dynamic_libs

binaries = collect_dynamic_libs("llama_cpp")
# The chat-template and grammar files beside the modules, no Python sources twice.
datas = collect_data_files("llama_cpp")
# The optional OpenAI-compatible server (its extra) is not part of the app.
excludedimports = ["llama_cpp.server"]
