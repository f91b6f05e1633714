//! libtorch's profiler (Kineto) for `mlbench run --profile`, through the C++ shim
//! (`c10d/profile.cpp`): started and stopped on the copy's thread, which runs its bench;
//! CPU operators always, CUDA kernels too on a CUDA device.

use crate::bench::{DeviceSpec, Profiler};
use std::ffi::{CStr, CString, c_char};

mod ffi {
    use std::ffi::c_char;

    unsafe extern "C" {
        pub fn mlb_profile_start(cuda: bool, err: *mut *mut c_char) -> bool;
        pub fn mlb_profile_stop(path: *const c_char, err: *mut *mut c_char) -> bool;
        pub fn mlb_c10d_free_error(err: *mut c_char);
    }
}

/// The profiler of one copy.
pub(super) struct Kineto {
    cuda: bool,
}

impl Kineto {
    /// A profiler for a copy on `device`.
    pub(super) fn new(device: DeviceSpec) -> Kineto {
        Kineto {
            cuda: matches!(device, DeviceSpec::Cuda(_)),
        }
    }
}

/// The shim's message, freed.
fn take(err: *mut c_char) -> String {
    if err.is_null() {
        return "failed (no message)".to_owned();
    }
    // SAFETY: a non-null `err` is a NUL-terminated string the shim allocated; it is read
    // once and freed once, here.
    unsafe {
        let text = CStr::from_ptr(err).to_string_lossy().into_owned();
        ffi::mlb_c10d_free_error(err);
        text
    }
}

impl Profiler for Kineto {
    fn start(&mut self) -> Result<(), String> {
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: `err` is a valid out-pointer; the shim sets it only on failure.
        match unsafe { ffi::mlb_profile_start(self.cuda, &mut err) } {
            true => Ok(()),
            false => Err(take(err)),
        }
    }

    fn stop(&mut self, path: &std::path::Path) -> Result<(), String> {
        let text = path.to_str().ok_or("the trace's path is not UTF-8")?;
        let c_path = CString::new(text).map_err(|e| e.to_string())?;
        let mut err: *mut c_char = std::ptr::null_mut();
        // SAFETY: `c_path` outlives the call; `err` is a valid out-pointer.
        match unsafe { ffi::mlb_profile_stop(c_path.as_ptr(), &mut err) } {
            true => Ok(()),
            false => Err(take(err)),
        }
    }
}
