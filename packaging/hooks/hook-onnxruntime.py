"""onnxruntime's CPU provider library (``capi/libonnxruntime_providers_shared.so``)
is opened by the extension at run time, not linked: collect every shared library
of the package. Its training and tooling subpackages are not used by the app.

``onnxruntime.quantization`` is (the int8 embedder and the judge's 7-bit copy are
prepared on first start, inference/derived.py), and it imports
``onnxruntime.transformers.onnx_utils``. That package puts its own folder on
``sys.path`` and imports its modules by their bare names (``fusion_utils``,
``onnx_model``), which the analysis cannot follow: its source files are collected as
files, where that ``sys.path`` entry finds them."""

from PyInstaller.utils.hooks import collect_data_files, collect_dynamic_libs

binaries = collect_dynamic_libs("onnxruntime")
datas = collect_data_files("onnxruntime", subdir="transformers", include_py_files=True)
excludedimports = ["onnxruntime.training", "onnxruntime.tools"]
