"""Uses a pyasc runtime API npuemu does not implement: must fail with a clear message."""
import asc.runtime.config as config
import asc.lib.runtime as rt     # importing works; the first unsupported name fails


def upload(nbytes):
    ptr = rt.malloc(nbytes)
    return ptr


if __name__ == "__main__":
    config.set_platform(config.Backend.Model)
    upload(1024)
    print("unreachable")
