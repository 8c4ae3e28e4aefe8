"""Workers that cannot form their process group: NCCL errors and rendezvous timeouts.

The NCCL texts are NCCL's own (`ncclGetErrorString`, NVIDIA/nccl src/init.cc),
wrapped by torch (`NCCL error in: <file>:<line>, <error>, NCCL version X`,
torch/csrc/distributed/c10d/NCCLUtils.hpp C10D_NCCL_CHECK) or by vLLM's pynccl
binding (`NCCL error: <error>`). The timeouts are torch's TCPStore (the strings
are in libtorch_cpu.so of torch 2.13.0).
"""

from __future__ import annotations

from .schema import Rule

_WORKER = "(Worker_TP1 pid=5151) "
_NCCL_REMEDY = (
    "NCCL could not set up the GPUs' communicator: give the container enough shared "
    "memory (--shm-size / --ipc=host), check peer access between the GPUs (or set "
    "NCCL_P2P_DISABLE=1), and rerun with NCCL_DEBUG=INFO to see which call failed. A "
    "relaunch on the same machine fails the same way."
)
_STORE_REMEDY = (
    "The workers' rendezvous timed out: a rank never joined (it crashed first: read its "
    "error above), or the address/port is unreachable (firewall, MASTER_ADDR, "
    "VLLM_HOST_IP on multi-node)."
)
_ERROR = r"(?P<detail>[^,\n]{1,200})"
"""ncclGetErrorString's text: no comma in any of its strings, so it ends at one."""

RULES: tuple[Rule, ...] = (
    Rule(
        id="DI001",
        status="preview",
        printed_by="pytorch",
        name="torch-nccl-error",
        outcome="distributed_init_failed",
        literal="NCCL error in: ",
        patterns=(r"NCCL error in: \S+:\d+, " + _ERROR,),
        constants=(("backend", "nccl"),),
        examples=(
            _WORKER + "torch.distributed.DistBackendError: NCCL error in: "
            "/pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, unhandled system error "
            "(run with NCCL_DEBUG=INFO for details), NCCL version 2.27.5",
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
            "1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version "
            "2.20.5",
        ),
        summary="torch's NCCL process group failed (ncclGetErrorString says which kind).",
        remediation=_NCCL_REMEDY,
        references=(
            "torch/csrc/distributed/c10d/NCCLUtils.hpp C10D_NCCL_CHECK",
            "NVIDIA/nccl src/init.cc ncclGetErrorString",
        ),
    ),
    Rule(
        id="DI002",
        status="preview",
        name="pynccl-error",
        outcome="distributed_init_failed",
        literal="NCCL error: ",
        source_pattern=r"NCCL error: \{\}",
        patterns=(r"NCCL error: " + _ERROR,),
        constants=(("backend", "nccl"),),
        examples=(
            _WORKER + "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO "
            "for details)",
            _WORKER + "RuntimeError: NCCL error: remote process exited or there was a network "
            "error",
        ),
        counter_examples=(
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
            "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5",
        ),
        summary="vLLM's own NCCL binding (pynccl) got an error from NCCL.",
        remediation=_NCCL_REMEDY,
        references=(
            "vllm/distributed/device_communicators/pynccl_wrapper.py:256 (0.8.5)",
            "pynccl_wrapper.py:448 (0.32.0)",
            "pynccl_wrapper.py:464 (0.33.0)",
        ),
    ),
    Rule(
        id="DI003",
        status="preview",
        printed_by="pytorch",
        name="tcpstore-client-connect-timeout",
        outcome="distributed_init_failed",
        literal="The client socket has timed out after",
        patterns=(
            r"(?P<detail>The client socket has timed out after \w+ while trying to connect to "
            r"\([^)\n]{1,300}\))",
        ),
        constants=(("backend", "tcp_store"),),
        examples=(
            _WORKER + "torch.distributed.DistNetworkError: The client socket has timed out after "
            "600000ms while trying to connect to (<host>, 29500).",
        ),
        summary="A worker could not reach the rendezvous store (torch's TCPStore).",
        remediation=_STORE_REMEDY,
        references=(
            "torch/csrc/distributed/c10d/socket.cpp (string in libtorch_cpu.so, torch 2.13.0)",
        ),
    ),
    Rule(
        id="DI004",
        status="preview",
        printed_by="pytorch",
        name="tcpstore-clients-join-timeout",
        outcome="distributed_init_failed",
        literal="seconds waiting for clients.",
        patterns=(
            r"(?P<detail>Timed out after \d+ seconds waiting for clients\. \d+/\d+ clients "
            r"joined\.)",
        ),
        constants=(("backend", "tcp_store"),),
        examples=(
            "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. "
            "1/2 clients joined.",
        ),
        summary="The rendezvous store waited for every rank and some never came.",
        remediation=_STORE_REMEDY,
        references=(
            "torch/csrc/distributed/c10d/TCPStore.cpp (string in libtorch_cpu.so, torch 2.13.0)",
        ),
    ),
    Rule(
        id="DI005",
        status="preview",
        printed_by="pytorch",
        name="nccl-watchdog-collective-timeout",
        outcome="distributed_init_failed",
        literal="Watchdog caught collective operation timeout: ",
        patterns=(
            r"Watchdog caught collective operation timeout: (?P<detail>Work(?P<backend>[A-Z]+)"
            r"\([^)\n]{0,300}\)(?: ran for \d+ milliseconds before timing out)?)",
        ),
        examples=(
            "[rank1]:[E1201 10:02:11.123456789 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog "
            "caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, "
            "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600048 milliseconds before "
            "timing out.",
        ),
        summary="A collective (the first all-reduce of the boot, often) never completed: a "
        "peer rank is stuck or gone.",
        remediation=_NCCL_REMEDY,
        references=("torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp WorkNCCL::checkTimeout",),
    ),
)
