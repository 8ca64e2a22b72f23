"""Loading libfuseprof-kernels and calling it.

The library is looked for, in order: the path in $FUSEPROF_KERNELS_LIB;
the install prefix (the dynamic linker's search path, then /usr/local/lib
and /usr/lib, where `make install` puts it by default); the build tree of
an in-tree build (two folders above this one). Nothing is loaded until a
kernel is first called, so importing the package never fails for want of
the library: the first call raises ImportError naming every place it
looked.
"""
import ctypes
import ctypes.util
import os
import threading

SONAME = "libfuseprof-kernels.so.0"
_lock = threading.Lock()
_lib = None

FPK_F32 = 0
FPK_BF16 = 1

_c_long = ctypes.c_long
_c_size = ctypes.c_size_t
_c_int = ctypes.c_int
_c_float = ctypes.c_float
_c_ptr = ctypes.c_void_p


def candidates():
    """The paths tried, in order (a path that does not exist is skipped)."""
    out = []
    env = os.environ.get("FUSEPROF_KERNELS_LIB")
    if env:
        out.append(env)
    found = ctypes.util.find_library("fuseprof-kernels")
    if found:
        out.append(found)
    for d in ("/usr/local/lib", "/usr/local/lib64", "/usr/lib", "/usr/lib64"):
        out.append(os.path.join(d, SONAME))
    here = os.path.dirname(os.path.abspath(__file__))
    out.append(os.path.join(here, "..", "..", SONAME))
    return out


def lib():
    """The loaded library (loaded and its signatures declared once)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in candidates():
            # find_library gives a bare soname the loader resolves itself
            if os.sep in path and not os.path.exists(path):
                tried.append(path + " (absent)")
                continue
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({e})")
                continue
            _declare(handle)
            _lib = handle
            return _lib
        raise ImportError("fuseprof_torch: libfuseprof-kernels not found; set "
                          "FUSEPROF_KERNELS_LIB to its path (tried: " +
                          "; ".join(tried) + ")")


# name -> (restype, argtypes). The C header, fuseprof/kernels.h, is the
# contract; these mirror it.
SIGNATURES = {}


def _declare(h):
    h.fpk_last_error.restype = ctypes.c_char_p
    h.fpk_last_error.argtypes = []
    h.fpk_strerror.restype = ctypes.c_char_p
    h.fpk_strerror.argtypes = [_c_int]
    for name, (res, args) in SIGNATURES.items():
        f = getattr(h, name)
        f.restype = res
        f.argtypes = args


class KernelError(RuntimeError):
    """A library call returned an error status (its message included)."""


def call(name, *args):
    """Call fpk_<name>; raise KernelError with the library's message on a
    non-zero status."""
    h = lib()
    rc = getattr(h, name)(*args)
    if rc != 0:
        msg = h.fpk_last_error() or h.fpk_strerror(rc) or b"unknown error"
        raise KernelError(msg.decode(errors="replace"))
    return rc


def size(name, *args):
    """A size query (a function returning size_t)."""
    return int(getattr(lib(), name)(*args))
