//! Link support for shaderc on Debian/Ubuntu.
//!
//! `shaderc-sys` (feature `prefer-static-linking`) links the system's
//! `libshaderc_combined.a`. Debian's copy of that archive does not contain
//! glslang and SPIRV-Tools, so on such systems we add those static archives
//! ourselves. Elsewhere (SHADERC_LIB_DIR pointing at a Vulkan SDK, or
//! shaderc-sys building from source) the combined archive is complete and
//! nothing is added. Set `VKSKIN_SHADERC_EXTRA_LIBS=0` to opt out, or to a
//! directory to take the archives from there.
//!
//! It also writes `$OUT_DIR/shaders.rs`: a table of every file under the
//! repository's `shaders/` folder as `include_str!`, so the GLSL is compiled
//! into the library and the engine needs no files at run time.

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
    embed_shaders();
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

fn embed_shaders() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../shaders");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    if files.is_empty() {
        println!(
            "cargo:warning=no shaders found under {}: the engine's shader table is empty",
            root.display()
        );
    }
    let mut table = String::from("&[\n");
    for (rel, abs) in files {
        table.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            abs.display().to_string()
        ));
    }
    table.push_str("]\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("shaders.rs");
    if let Err(e) = std::fs::write(&out, table) {
        panic!("writing {}: {e}", out.display());
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let abs = path.canonicalize().unwrap_or(path.clone());
            out.push((rel, abs));
        }
    }
}
