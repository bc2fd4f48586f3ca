"""onnxruntime's CPU provider library (``capi/libonnxruntime_providers_shared.so``)
is opened by the extension at run time, not linked: collect every shared library
of the package. Its training and tooling subpackages are not used by the app."""

from PyInstaller.utils.hooks import collect_dynamic_libs

binaries = collect_dynamic_libs("onnxruntime")
excludedimports = ["onnxruntime.training", "onnxruntime.tools", "onnxruntime.transformers"]
