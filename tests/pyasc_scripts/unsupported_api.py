"""Uses a pyasc host API npuemu does not implement: must fail with a clear message."""
import asc.runtime.config as config
import asc.lib.host as host     # importing works; the first unsupported name fails


def make_tiling():
    tiling = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    return tiling


if __name__ == "__main__":
    config.set_platform(config.Backend.Model)
    make_tiling()
    print("unreachable")
