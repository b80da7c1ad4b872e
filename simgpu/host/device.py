"""The modelled GPU as numba.cuda's device and context objects (``get_current_device()``,
``current_context()``, ``cuda.gpus``, ``cuda.detect()``): their attributes are the preset's."""
from __future__ import annotations

from ..errors import SimGPUError

KIB = 1024
PRIMARY_MEMORY_MANAGER = [None]      # host/driver.py's MEMORY_MANAGER (set there: no import cycle)


def device_attributes(gpu):
    """CUDA device attributes (numba's names) from the modelled GPU."""
    return {
        "MAX_THREADS_PER_BLOCK": gpu.max_threads_per_block,
        "MAX_BLOCK_DIM_X": gpu.max_block_dim[0], "MAX_BLOCK_DIM_Y": gpu.max_block_dim[1],
        "MAX_BLOCK_DIM_Z": gpu.max_block_dim[2],
        "MAX_GRID_DIM_X": gpu.max_grid_dim[0], "MAX_GRID_DIM_Y": gpu.max_grid_dim[1],
        "MAX_GRID_DIM_Z": gpu.max_grid_dim[2],
        "MAX_SHARED_MEMORY_PER_BLOCK": gpu.static_shared_mem_per_block_bytes,
        "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": gpu.max_shared_mem_per_block_bytes,
        "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": gpu.shared_mem_per_sm_bytes,
        "MULTIPROCESSOR_COUNT": gpu.sm_count,
        "WARP_SIZE": gpu.warp_size,
        "MAX_THREADS_PER_MULTIPROCESSOR": gpu.max_threads_per_sm,
        "MAX_BLOCKS_PER_MULTIPROCESSOR": gpu.max_blocks_per_sm,
        "MAX_REGISTERS_PER_BLOCK": gpu.registers_per_sm,
        "MAX_REGISTERS_PER_MULTIPROCESSOR": gpu.registers_per_sm,
        "CLOCK_RATE": int(gpu.clock_hz / 1e3),
        "COMPUTE_CAPABILITY_MAJOR": gpu.compute_capability[0],
        "COMPUTE_CAPABILITY_MINOR": gpu.compute_capability[1],
        "TOTAL_CONSTANT_MEMORY": 64 * KIB,
        "L2_CACHE_SIZE": gpu.l2.size_bytes if getattr(gpu, "l2", None) else 0,
        "UNIFIED_ADDRESSING": 1, "CAN_MAP_HOST_MEMORY": 1, "CONCURRENT_KERNELS": 1,
        "ASYNC_ENGINE_COUNT": 2, "ECC_ENABLED": 0, "INTEGRATED": 0, "MANAGED_MEMORY": 1,
        "COOPERATIVE_LAUNCH": 1, "PCI_BUS_ID": 0, "PCI_DEVICE_ID": 0, "PCI_DOMAIN_ID": 0,
    }


class SimDevice:
    """numba.cuda's Device for GPU `id` of the modelled system (all of one preset).
    ``with device:`` makes it the current device of this host thread (``with cuda.gpus[i]``)."""

    def __init__(self, gpu, id=0, session=None):
        self.gpu = gpu
        self.id = int(id)
        self._session = session
        self.name = f"{gpu.name} (modelled by simgpu)".encode()
        self.compute_capability = tuple(gpu.compute_capability)
        self.uuid = f"GPU-00000000-0000-0000-0000-5133675a{self.id:04x}"
        self.supports_float16 = True
        self.supports_bfloat16 = self.compute_capability >= (8, 0)
        self.supports_fp8 = self.compute_capability >= (8, 9)
        self.attributes = device_attributes(gpu)
        self.attributes["PCI_BUS_ID"] = self.id

    def __getattr__(self, name):
        attrs = self.__dict__.get("attributes", {})
        if name in attrs:
            return attrs[name]
        raise AttributeError(f"the modelled GPU has no device attribute {name!r} "
                             f"(simgpu models: {', '.join(sorted(attrs))})")

    def __repr__(self):
        return f"<CUDA device {self.id} '{self.name.decode()}'>"

    def __eq__(self, other):
        return isinstance(other, SimDevice) and (self.id, self.gpu.name) == (other.id, other.gpu.name)

    def __hash__(self):
        return hash((self.id, self.gpu.name))

    def get_primary_context(self):
        return SimContext(self, memory_manager=PRIMARY_MEMORY_MANAGER[0])

    def reset(self):
        return None

    def __enter__(self):
        if self._session is not None:
            self._session.push_device(self.id)
        return self

    def __exit__(self, *exc):
        if self._session is not None:
            self._session.pop_device()
        return False


class SimContext:
    """numba.cuda's Context: memory info from the modelled DRAM; no driver underneath."""

    def __init__(self, device, allocated=lambda: 0, memory_manager=None):
        self.device = device
        self._allocated = allocated
        self.memory_manager = memory_manager     # host/driver.MEMORY_MANAGER (deallocation queue)

    @property
    def deallocations(self):
        return self._manager().deallocations

    def memalloc(self, size):
        return self._manager().memalloc(size)

    def get_ipc_handle(self, memory):
        return self._manager().get_ipc_handle(memory)

    def defer_cleanup(self):
        return self._manager().defer_cleanup()

    def _manager(self):
        if self.memory_manager is None:
            raise SimGPUError("this context has no memory manager (simgpu.install() gives one)")
        return self.memory_manager

    def get_memory_info(self):
        total = int(self.device.gpu.dram.size_bytes)
        return (total - int(self._allocated()), total)

    def can_access_peer(self, peer_device):
        """Peer access between two GPUs of the modelled system (NVLink/PCIe P2P): always possible."""
        n = getattr(self.device._session, "devices", 1)
        peer = int(getattr(peer_device, "id", peer_device))
        return 0 <= peer < n and peer != self.device.id

    def enable_peer_access(self, peer_context, flags=0):
        """Kernels of this context's GPU may then read and write the peer GPU's memory
        (cuCtxEnablePeerAccess); without it such a launch is an error, as on the card."""
        peer = peer_context.device.id
        if not self.can_access_peer(peer):
            raise SimGPUError(f"enable_peer_access: GPU {self.device.id} and GPU {peer} are not peers "
                              "in the modelled system")
        self.device._session.peer_access.add((self.device.id, peer))

    def __eq__(self, other):
        return isinstance(other, SimContext) and self.device == other.device

    def __hash__(self):
        return hash(("context", self.device))

    def synchronize(self):
        return None

    def reset(self):
        return None

    def __getattr__(self, name):
        raise SimGPUError(f"current_context().{name} is the CUDA driver's API, which simgpu does not "
                          "model (simgpu models the GPU, not the driver); use the numba.cuda host API "
                          "(to_device, device_array, stream, event)")


class SimGPUs:
    """``cuda.gpus``: the GPUs of the modelled system (``simgpu.install(devices=N)``; default
    one).  `session` is a function giving the installed session (a later install() is seen)."""

    def __init__(self, session):
        self._session = session

    def _all(self):
        s = self._session()
        return [SimDevice(s.gpus[i], i, s) for i in range(s.devices)]

    @property
    def current(self):
        s = self._session()
        return SimDevice(s.gpu, s.current_device(), s)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._all()[i]
        s = self._session()
        s.check_device(i, f"cuda.gpus[{i!r}]")
        return SimDevice(s.gpus[i], i, s)

    def __len__(self):
        return self._session().devices

    def __iter__(self):
        return iter(self._all())

    def __enter__(self):
        return self.current.__enter__()

    def __exit__(self, *exc):
        self._session().pop_device()
        return False


def detect_text(devices):
    """What ``cuda.detect()`` prints, for the modelled GPUs."""
    lines = [f"Found {len(devices)} CUDA devices"]
    for d in devices:
        lines += [
            f"id {d.id}    {d.name!r:>50} {'[SUPPORTED]':>40}",
            f"{'Compute Capability':>40}: {d.compute_capability[0]}.{d.compute_capability[1]}",
            f"{'PCI Device ID':>40}: 0",
            f"{'PCI Bus ID':>40}: {d.id}",
            f"{'UUID':>40}: {d.uuid}",
            f"{'Watchdog':>40}: Disabled",
            f"{'FP32/FP64 Performance Ratio':>40}: 2",
        ]
    n = len(devices)
    return "\n".join(lines + ["Summary:",
                              f"\t{n}/{n} devices are supported (GPUs modelled by simgpu: no CUDA driver is used)"])
