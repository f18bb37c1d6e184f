//! Link support for shaderc on Debian/Ubuntu.
//!
//! `shaderc-sys` (feature `prefer-static-linking`) links the system's
//! `libshaderc_combined.a`. Debian's copy of that archive does not contain
//! glslang and SPIRV-Tools, so on such systems we add those static archives
//! ourselves. Elsewhere (SHADERC_LIB_DIR pointing at a Vulkan SDK, or
//! shaderc-sys building from source) the combined archive is complete and
//! nothing is added. Set `VKSKIN_SHADERC_EXTRA_LIBS=0` to opt out, or to a
//! directory to take the archives from there.

use std::path::{Path, PathBuf};

const GLSLANG_ARCHIVES: &[&str] = &[
    "glslang",
    "MachineIndependent",
    "GenericCodeGen",
    "OSDependent",
    "OGLCompiler",
    "HLSL",
    "SPIRV",
    "SPIRV-Tools-opt",
    "SPIRV-Tools",
];

fn main() {
    println!("cargo:rerun-if-env-changed=VKSKIN_SHADERC_EXTRA_LIBS");
    println!("cargo:rerun-if-env-changed=SHADERC_LIB_DIR");
    println!("cargo:rerun-if-env-changed=VULKAN_SDK");
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_GPU").is_none() {
        return;
    }
    let dir = match std::env::var("VKSKIN_SHADERC_EXTRA_LIBS") {
        Ok(v) if v == "0" => return,
        Ok(v) => Some(PathBuf::from(v)),
        Err(_) => {
            // Only where shaderc-sys will pick the system library.
            if std::env::var_os("SHADERC_LIB_DIR").is_some()
                || std::env::var_os("VULKAN_SDK").is_some()
            {
                None
            } else {
                let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
                let d = PathBuf::from(format!("/usr/lib/{arch}-linux-gnu"));
                debian_split_archives(&d).then_some(d)
            }
        }
    };
    if let Some(dir) = dir {
        println!("cargo:rustc-link-search=native={}", dir.display());
        for lib in GLSLANG_ARCHIVES {
            if dir.join(format!("lib{lib}.a")).exists() {
                println!("cargo:rustc-link-lib=static={lib}");
            }
        }
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
}

/// Debian's layout: a combined shaderc archive beside separate glslang ones.
fn debian_split_archives(dir: &Path) -> bool {
    dir.join("libshaderc_combined.a").exists() && dir.join("libglslang.a").exists()
}
