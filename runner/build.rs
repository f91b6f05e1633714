//! An rpath to the libtorch folder torch-sys linked against (it passes it on as
//! `DEP_TCH_LIBTORCH_LIB`, its `links` key being "tch"), so that programs and tests using
//! libtorch run without LD_LIBRARY_PATH; that libtorch's version and this checkout's
//! commit, for `system.json` (`MLBENCH_LIBTORCH_VERSION`, `MLBENCH_COMMIT`); and the C++
//! shim to libtorch's c10d (`c10d/shim.cpp`, against that libtorch's headers and the gloo
//! headers kept in `c10d/gloo/`).
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        // A CUDA libtorch (`setup-libtorch.sh --cuda`): torch-sys links libtorch_cuda.so
        // under the linker's --as-needed, which drops it (no symbol of it is referenced
        // directly), and libtorch then sees no GPU. Keep it (seen on an H200, 2026-11-26).
        if Path::new(&dir).join("libtorch_cuda.so").exists() {
            println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
        }
        build_c10d_shim(Path::new(&dir));
        // libtorch's archive carries `build-version` beside `lib/`.
        let version = Path::new(&dir).join("../build-version");
        if let Ok(text) = std::fs::read_to_string(&version) {
            println!("cargo:rustc-env=MLBENCH_LIBTORCH_VERSION={}", text.trim());
        }
    }
    for watched in ["../.git/HEAD", "../.git/refs/heads"] {
        if Path::new(watched).exists() {
            println!("cargo:rerun-if-changed={watched}");
        }
    }
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|c| !c.is_empty());
    if let Some(commit) = commit {
        println!("cargo:rustc-env=MLBENCH_COMMIT={commit}");
    }
}

/// Compiles `c10d/shim.cpp` against the libtorch whose `lib/` is `lib`. Only with the `tch`
/// feature, the one that links libtorch (and sets DEP_TCH_LIBTORCH_LIB). With NCCL too when
/// that libtorch is a CUDA one carrying the nvidia wheels' headers (`setup-libtorch.sh
/// --cuda`); if that build fails, the shim is built with Gloo alone and a warning says why.
#[cfg(feature = "tch")]
fn build_c10d_shim(lib: &Path) {
    println!("cargo:rerun-if-changed=c10d");
    let include = lib.join("../include");
    let nvidia = include.join("nvidia");
    let cuda = lib.join("libtorch_cuda.so").exists();
    if cuda && nvidia.join("nccl.h").exists() {
        match shim(&include)
            .include(&nvidia)
            .define("USE_C10D_NCCL", None)
            .define("USE_CUDA", None)
            .define("MLB_NCCL", None)
            .try_compile("mlbench_c10d")
        {
            Ok(()) => return link_shim(),
            Err(e) => {
                println!("cargo:warning=the c10d shim without NCCL: its NCCL build failed: {e}")
            }
        }
    } else if cuda {
        println!(
            "cargo:warning=the c10d shim without NCCL: {} lacks NCCL's header (runner/setup-libtorch.sh --cuda puts the nvidia headers there)",
            nvidia.display()
        );
    }
    shim(&include).compile("mlbench_c10d");
    link_shim();
}

/// The shim's build against libtorch's headers under `include` and the gloo headers kept in
/// `c10d/gloo`.
#[cfg(feature = "tch")]
fn shim(include: &Path) -> cc::Build {
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .pic(true)
        .warnings(false)
        .include(include)
        .include(include.join("torch/csrc/api/include"))
        .include("c10d/gloo")
        // torch 2.13's headers need C++20; its wheels use the C++11 ABI; c10d's Gloo
        // declarations are behind USE_C10D_GLOO, as in torch's own build.
        .flag("-std=c++20")
        .define("_GLIBCXX_USE_CXX11_ABI", "1")
        .define("USE_C10D_GLOO", None)
        .define("GLOG_USE_GLOG_EXPORT", None)
        .file("c10d/shim.cpp")
        .file("c10d/profile.cpp");
    build
}

/// The shim's c10d symbols live in libtorch_cpu (and libtorch_cuda, linked already for a
/// CUDA libtorch); name them after the shim's archive.
#[cfg(feature = "tch")]
fn link_shim() {
    println!("cargo:rustc-link-lib=dylib=torch_cpu");
    println!("cargo:rustc-link-lib=dylib=c10");
}

#[cfg(not(feature = "tch"))]
fn build_c10d_shim(_: &Path) {}
