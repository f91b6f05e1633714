//! libtorch's c10d, the engine PyTorch's `torch.distributed` runs on: a `TCPStore`
//! rendezvous and a `ProcessGroupGloo` or (built against a CUDA libtorch) a
//! `ProcessGroupNCCL`, reached through the C++ shim `c10d/shim.cpp`.
//!
//! Every collective here is c10d's: this module constructs the group, passes tensors and
//! turns the shim's error strings into [`C10dError`]. For DDP one [`ProcessGroup`] per
//! process, one process per rank, as `torchrun` starts them; for nn.DataParallel's replicas,
//! threads of one process, a world of groups in that process.
use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr::NonNull;
use std::time::Duration;

use tch::Tensor;

pub use crate::rendezvous::Rendezvous;

/// A c10d call that failed, with c10d's own message (a peer that closed its connection, a
/// rendezvous or a collective past its timeout, …).
#[derive(Debug, thiserror::Error)]
#[error("c10d {operation}: {message}")]
pub struct C10dError {
    /// What was asked: "rendezvous", "all_reduce", "broadcast", "reduce", "barrier".
    pub operation: &'static str,
    /// c10d's message.
    pub message: String,
}

mod ffi {
    use std::ffi::{c_char, c_void};
    use torch_sys::C_tensor;

    unsafe extern "C" {
        pub fn mlb_c10d_free_error(err: *mut c_char);
        pub fn mlb_c10d_gloo_new(
            host: *const c_char,
            port: u16,
            rank: i32,
            world: i32,
            timeout_ms: i64,
            err: *mut *mut c_char,
        ) -> *mut c_void;
        pub fn mlb_c10d_nccl_new(
            host: *const c_char,
            port: u16,
            rank: i32,
            world: i32,
            timeout_ms: i64,
            err: *mut *mut c_char,
        ) -> *mut c_void;
        pub fn mlb_c10d_has_nccl() -> bool;
        pub fn mlb_c10d_free(group: *mut c_void);
        pub fn mlb_c10d_all_reduce_sum(
            group: *mut c_void,
            tensor: *mut C_tensor,
            err: *mut *mut c_char,
        ) -> bool;
        pub fn mlb_c10d_broadcast(
            group: *mut c_void,
            tensor: *mut C_tensor,
            root: i32,
            err: *mut *mut c_char,
        ) -> bool;
        pub fn mlb_c10d_reduce_sum(
            group: *mut c_void,
            tensor: *mut C_tensor,
            root: i32,
            err: *mut *mut c_char,
        ) -> bool;
        pub fn mlb_c10d_barrier(group: *mut c_void, err: *mut *mut c_char) -> bool;
    }
}

/// Which of c10d's process groups: Gloo's for CPU tensors, NCCL's for CUDA tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// `ProcessGroupGloo`.
    Gloo,
    /// `ProcessGroupNCCL`: only in a runner built against a CUDA libtorch with NCCL's
    /// headers ([`Engine::nccl_built`]); elsewhere joining fails, saying so.
    Nccl,
}

impl Engine {
    /// The engine for tensors on `device`, as `torch.distributed` picks its default backend.
    pub fn for_device(device: tch::Device) -> Self {
        if device.is_cuda() {
            Engine::Nccl
        } else {
            Engine::Gloo
        }
    }

    /// Whether this runner's shim was built with NCCL.
    pub fn nccl_built() -> bool {
        // SAFETY: a function of no arguments returning a constant.
        unsafe { ffi::mlb_c10d_has_nccl() }
    }
}

/// One rank's membership in a c10d process group. Usually one per process;
/// [`ProcessGroup::world_here`] makes a whole world in one process.
pub struct ProcessGroup {
    raw: NonNull<c_void>,
    rank: usize,
    world: usize,
}

// SAFETY: the shim's group owns a c10d Store and Backend, which c10d makes safe to call from
// any thread; the runner uses one group from one thread at a time (`&mut self` on every
// collective).
unsafe impl Send for ProcessGroup {}

/// Takes the shim's error string (allocated with malloc) into a [`C10dError`].
fn take_error(operation: &'static str, err: *mut c_char) -> C10dError {
    let message = if err.is_null() {
        "failed (no message)".to_owned()
    } else {
        // SAFETY: a non-null `err` is a NUL-terminated string the shim allocated for us; it
        // is read once and freed once, here.
        unsafe {
            let text = CStr::from_ptr(err).to_string_lossy().into_owned();
            ffi::mlb_c10d_free_error(err);
            text
        }
    };
    C10dError { operation, message }
}

impl ProcessGroup {
    /// Joins the Gloo group: blocks until all `world` ranks have reached `rendezvous`'s
    /// store, or its timeout passes.
    pub fn gloo(rendezvous: &Rendezvous) -> Result<Self, C10dError> {
        Self::join(Engine::Gloo, rendezvous)
    }

    /// Joins the group of `engine`: blocks until all `world` ranks have reached
    /// `rendezvous`'s store, or its timeout passes.
    pub fn join(engine: Engine, rendezvous: &Rendezvous) -> Result<Self, C10dError> {
        let host = CString::new(rendezvous.host.as_str()).map_err(|_| C10dError {
            operation: "rendezvous",
            message: format!("host {:?} holds a NUL byte", rendezvous.host),
        })?;
        let (rank, world) = (rendezvous.rank, rendezvous.world);
        if world == 0 || rank >= world {
            return Err(C10dError {
                operation: "rendezvous",
                message: format!("rank {rank} outside a world of {world}"),
            });
        }
        let timeout_ms = i64::try_from(rendezvous.timeout.as_millis()).unwrap_or(i64::MAX);
        let mut err = std::ptr::null_mut();
        let new = match engine {
            Engine::Gloo => ffi::mlb_c10d_gloo_new,
            Engine::Nccl => ffi::mlb_c10d_nccl_new,
        };
        // SAFETY: `host` outlives the call; `err` is a valid out-pointer.
        let raw = unsafe {
            new(
                host.as_ptr(),
                rendezvous.port,
                rank as i32,
                world as i32,
                timeout_ms,
                &mut err,
            )
        };
        match NonNull::new(raw) {
            Some(raw) => Ok(Self { raw, rank, world }),
            None => Err(take_error("rendezvous", err)),
        }
    }

    /// A whole Gloo world of `world` ranks in this process ([`ProcessGroup::world_here`]).
    pub fn gloo_world_here(world: usize, timeout: Duration) -> Result<Vec<Self>, C10dError> {
        Self::world_here(Engine::Gloo, world, timeout)
    }

    /// A whole world of `world` ranks of `engine` in this process, one group per rank (for
    /// replicas stepped by threads of one process, as nn.DataParallel's): rank i's group at
    /// index i. Each group is made on a thread of its own, since every rank's construction
    /// waits for the others'.
    pub fn world_here(
        engine: Engine,
        world: usize,
        timeout: Duration,
    ) -> Result<Vec<Self>, C10dError> {
        let port = crate::rendezvous::free_port().map_err(|e| C10dError {
            operation: "rendezvous",
            message: format!("no free port on the loopback: {e}"),
        })?;
        std::thread::scope(|scope| {
            let joins: Vec<_> = (0..world)
                .map(|rank| {
                    scope.spawn(move || {
                        let rendezvous = Rendezvous::on_this_host(port, rank, world, timeout);
                        Self::join(engine, &rendezvous)
                    })
                })
                .collect();
            joins
                .into_iter()
                .map(|join| {
                    join.join().unwrap_or_else(|_| {
                        Err(C10dError {
                            operation: "rendezvous",
                            message: "a rank's thread panicked".into(),
                        })
                    })
                })
                .collect()
        })
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn world(&self) -> usize {
        self.world
    }

    /// Runs one of the shim's collectives, `call(group, err)`, turning its failure into a
    /// [`C10dError`] of `operation`.
    fn collective(
        &mut self,
        operation: &'static str,
        call: impl FnOnce(*mut c_void, *mut *mut c_char) -> bool,
    ) -> Result<(), C10dError> {
        let mut err = std::ptr::null_mut();
        if call(self.raw.as_ptr(), &mut err) {
            Ok(())
        } else {
            Err(take_error(operation, err))
        }
    }

    /// Sums `tensor` in place over the ranks (a dense tensor, the same shape and kind on
    /// every rank, on the engine's device kind).
    pub fn all_reduce_sum(&mut self, tensor: &mut Tensor) -> Result<(), C10dError> {
        // SAFETY: the group is live; `tensor` stays borrowed for the call, and tch's tensor
        // pointer is the `at::Tensor*` the shim takes; `err` is a valid out-pointer.
        self.collective("all_reduce", |group, err| unsafe {
            ffi::mlb_c10d_all_reduce_sum(group, tensor.as_mut_ptr(), err)
        })
    }

    /// Copies rank `root`'s `tensor` into every rank's.
    pub fn broadcast(&mut self, tensor: &mut Tensor, root: usize) -> Result<(), C10dError> {
        // SAFETY: as in `all_reduce_sum`.
        self.collective("broadcast", |group, err| unsafe {
            ffi::mlb_c10d_broadcast(group, tensor.as_mut_ptr(), root as i32, err)
        })
    }

    /// Sums every rank's `tensor` into rank `root`'s; the others' keep their values.
    pub fn reduce_sum(&mut self, tensor: &mut Tensor, root: usize) -> Result<(), C10dError> {
        // SAFETY: as in `all_reduce_sum`.
        self.collective("reduce", |group, err| unsafe {
            ffi::mlb_c10d_reduce_sum(group, tensor.as_mut_ptr(), root as i32, err)
        })
    }

    /// Returns once every rank has called it.
    pub fn barrier(&mut self) -> Result<(), C10dError> {
        // SAFETY: the group is live; `err` is a valid out-pointer.
        self.collective("barrier", |group, err| unsafe {
            ffi::mlb_c10d_barrier(group, err)
        })
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        // SAFETY: `raw` came from `mlb_c10d_gloo_new` and is freed once, here.
        unsafe { ffi::mlb_c10d_free(self.raw.as_ptr()) }
    }
}
