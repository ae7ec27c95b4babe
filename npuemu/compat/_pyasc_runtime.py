"""pyasc's host-side runtime API on npuemu (``asc.runtime.config``, ``asc.lib.runtime``).

pyasc drives a device, or the CANN simulator, through ACL: it selects a backend
and SoC version, opens a device and a stream, and launches kernels
asynchronously.  Here the backend choice only records itself, the SoC version
selects npuemu's platform profile of the same name, devices are handles, and
streams are npuemu's own (:class:`npuemu.runtime.stream.Stream`): a launch on
a stream is queued and runs when the stream is synchronised.

State lives in :data:`state`; :func:`reset_state` gives a fresh runtime (the
compatibility layer calls it each time it is installed).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..errors import LaunchError
from ..language.enums import KernelType
from .. import platform as _platform
from ..runtime.stream import Stream, synchronize_all

__all__ = ["Backend", "Platform", "KernelType", "set_platform", "Stream", "RuntimeState", "state",
           "reset_state"]


class Backend(Enum):
    """pyasc's execution backends.  Under npuemu both run kernels on the emulator."""

    Model = "Model"
    NPU = "NPU"


class Platform(Enum):
    """pyasc's SoC versions; each selects the npuemu platform profile of the same name."""

    Ascend910B1 = "Ascend910B1"
    Ascend910B2 = "Ascend910B2"
    Ascend910B2C = "Ascend910B2C"
    Ascend910B3 = "Ascend910B3"
    Ascend910B4 = "Ascend910B4"
    Ascend910B4_1 = "Ascend910B4-1"
    Ascend910_9362 = "Ascend910_9362"
    Ascend910_9372 = "Ascend910_9372"
    Ascend910_9381 = "Ascend910_9381"
    Ascend910_9382 = "Ascend910_9382"
    Ascend910_9391 = "Ascend910_9391"
    Ascend910_9392 = "Ascend910_9392"


@dataclass
class RuntimeState:
    """What pyasc's runtime remembers between calls."""

    model: bool = True
    device_id: int | None = None
    streams: dict[int, Stream] = field(default_factory=dict)


state = RuntimeState()


def reset_state() -> None:
    """Forget the backend, device and streams (not the selected platform, see set_soc_version)."""
    global state
    state = RuntimeState()


# --------------------------------------------------------------------------- asc.runtime.config


def set_platform(backend: Backend | str, soc_version: Platform | str | None = None,
                 device_id: int | None = None, check: bool = True) -> None:
    """Select the backend and the SoC version of later launches (``config.set_platform``).

    Both backends run on the emulator.  ``soc_version`` selects the npuemu
    profile of that name (a custom :class:`npuemu.platform.Platform` is
    accepted too); without it, launches use ``$NPUEMU_PLATFORM`` or
    Ascend910B1.  ``check`` is accepted for compatibility: the emulator is
    always available.
    """
    backend = Backend(backend)
    if backend is Backend.Model:
        use_model()
    else:
        use_npu()
    set_soc_version(soc_version)
    if device_id is not None:
        set_device(device_id)


# --------------------------------------------------------------------------- asc.lib.runtime


def use_model(custom_lib_prefix: str | None = None) -> None:
    state.model = True


def use_npu(custom_lib_prefix: str | None = None) -> None:
    state.model = False


def is_model() -> bool:
    return state.model


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def set_soc_version(soc_version: Platform | str | Any | None) -> None:
    """Make ``soc_version`` the platform of launches that name none (``None``: the default)."""
    if isinstance(soc_version, Platform):
        soc_version = soc_version.value
    _platform.set_default_platform(soc_version)


def get_soc_version() -> Platform | str:
    """The selected SoC version: a :class:`Platform` member, or the name of a custom npuemu profile."""
    name = current_platform()
    try:
        return Platform(name)
    except ValueError:
        return name


def current_platform() -> str:
    """Name of the platform launches run on when they name none."""
    return _platform.default_platform().name


def check_device_handle(device_id: int) -> None:
    if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
        raise LaunchError(f"device id must be an int >= 0, got {device_id!r}")


def default_device() -> int:
    return 0


def device_count() -> int:
    """One emulated device (every device id is accepted and means the same emulator)."""
    return 1


def current_device() -> int:
    if state.device_id is None:
        set_device(default_device())
    return state.device_id  # type: ignore[return-value]


def set_device(device_id: int) -> None:
    check_device_handle(device_id)
    state.device_id = device_id


def reset_device(device_id: int | None = None) -> None:
    state.streams.pop(current_device() if device_id is None else device_id, None)


def create_stream(priority: int = 0) -> Stream:
    return Stream(current_device(), priority)


def destroy_stream(stream_handle: Stream | None) -> None:
    """Run what is still queued on the stream (a device waits for it too); nothing else to release."""
    if stream_handle is not None:
        stream_handle.synchronize()


def current_stream(device_id: int | None = None) -> Stream:
    """The device's default stream; pass it to ``kernel[core_num, stream]`` as in pyasc."""
    if device_id is None:
        device_id = current_device()
    else:
        check_device_handle(device_id)
    stream = state.streams.get(device_id)
    if stream is None:
        stream = state.streams[device_id] = Stream(device_id)
    return stream


def synchronize(stream_handle: Stream | None = None, timeout: int = 0) -> None:
    """Run the launches queued on ``stream_handle`` (default: the current device's stream), in order."""
    (stream_handle if stream_handle is not None else current_stream()).synchronize()


def synchronize_device() -> None:
    """Run the launches queued on every stream."""
    synchronize_all()


CONFIG_NAMES: dict[str, Any] = {
    "Backend": Backend, "Platform": Platform, "KernelType": KernelType, "set_platform": set_platform,
}

RUNTIME_NAMES: dict[str, Any] = {fn.__name__: fn for fn in (
    use_model, use_npu, is_model, is_available, is_initialized, set_soc_version, get_soc_version,
    current_platform, check_device_handle, default_device, device_count, current_device, set_device,
    reset_device, create_stream, destroy_stream, current_stream, synchronize, synchronize_device,
)} | {"Stream": Stream}


# attributes of pyasc's ``asc.lib.runtime.state`` module that mean something here
STATE_GETTERS: dict[str, Any] = {
    "model": lambda: state.model,
    "device_id": lambda: state.device_id,
    "soc_verison": get_soc_version,      # pyasc's spelling
}
