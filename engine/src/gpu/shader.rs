use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use ash::vk;

use super::{Device, GpuError, GpuResult};

/// The GLSL sources of the repository's `shaders/` folder, compiled into the
/// library by `build.rs` so the engine needs no files at run time: `(path
/// relative to shaders/, source)`.
pub static EMBEDDED_SHADERS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shaders.rs"));

/// A set of GLSL files by path (`skin/lbs.vert`): the embedded ones plus any
/// the caller adds or overrides. `#include "x"` is resolved against this
/// set, first relative to the including file's folder, then to the root.
#[derive(Clone, Debug)]
pub struct ShaderSources {
    files: BTreeMap<String, Cow<'static, str>>,
}

impl Default for ShaderSources {
    fn default() -> Self {
        Self::embedded()
    }
}

impl ShaderSources {
    /// The files of [`EMBEDDED_SHADERS`] alone.
    pub fn embedded() -> Self {
        Self {
            files: EMBEDDED_SHADERS
                .iter()
                .map(|&(p, s)| (p.to_owned(), Cow::Borrowed(s)))
                .collect(),
        }
    }

    /// Adds or replaces a file.
    pub fn with(mut self, path: &str, source: impl Into<String>) -> Self {
        self.files
            .insert(path.to_owned(), Cow::Owned(source.into()));
        self
    }

    /// The source of the file at `path`, exactly as written in the set.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(|s| s.as_ref())
    }

    /// Every path in the set, in sorted order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    fn resolve(&self, requested: &str, includer: &str) -> Option<(String, &str)> {
        let dir = includer.rsplit_once('/').map(|(d, _)| d);
        let candidates = dir
            .map(|d| normalise(&format!("{d}/{requested}")))
            .into_iter()
            .chain(std::iter::once(normalise(requested)));
        for c in candidates {
            if let Some(src) = self.get(&c) {
                return Some((c, src));
            }
        }
        None
    }
}

/// Folds `a/../b` and `./` so relative includes find their table entry.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// One shader to compile: a file of a [`ShaderSources`] set and the macro
/// defines that pick its permutation. The stage follows the extension
/// (`.vert`, `.frag`, `.comp`).
#[derive(Clone, Debug, Default)]
pub struct ShaderDesc {
    /// The file's path in the [`ShaderSources`] set (`skin/lbs.vert`).
    pub file: String,
    /// `(name, value)` macro definitions, as `#define name value`.
    pub defines: Vec<(String, String)>,
}

impl ShaderDesc {
    /// `file` with no defines.
    pub fn new(file: &str) -> Self {
        Self {
            file: file.to_owned(),
            defines: Vec::new(),
        }
    }

    /// Adds the define `name` = `value`.
    pub fn define(mut self, name: &str, value: impl ToString) -> Self {
        self.defines.push((name.to_owned(), value.to_string()));
        self
    }

    /// Adds every define of `defines`.
    pub fn defines(mut self, defines: &[(String, String)]) -> Self {
        self.defines.extend_from_slice(defines);
        self
    }

    /// The stage the file's extension names (`.vert`, `.frag`, `.comp`);
    /// another extension is [`GpuError::InvalidArgument`].
    pub fn stage(&self) -> GpuResult<vk::ShaderStageFlags> {
        let ext = self.file.rsplit('.').next().unwrap_or_default();
        match ext {
            "vert" => Ok(vk::ShaderStageFlags::VERTEX),
            "frag" => Ok(vk::ShaderStageFlags::FRAGMENT),
            "comp" => Ok(vk::ShaderStageFlags::COMPUTE),
            _ => Err(GpuError::InvalidArgument(format!(
                "{}: unknown shader stage (expected .vert, .frag or .comp)",
                self.file
            ))),
        }
    }
}

/// Compiles GLSL to SPIR-V (Vulkan 1.3 target) with shaderc. A compile
/// error comes back as [`GpuError::ShaderCompile`] naming the file (the
/// included file when the error is there) and the line.
pub fn compile(sources: &ShaderSources, desc: &ShaderDesc) -> GpuResult<Vec<u32>> {
    let kind = match desc.stage()? {
        vk::ShaderStageFlags::VERTEX => shaderc::ShaderKind::Vertex,
        vk::ShaderStageFlags::FRAGMENT => shaderc::ShaderKind::Fragment,
        _ => shaderc::ShaderKind::Compute,
    };
    let source = sources
        .get(&desc.file)
        .ok_or_else(|| GpuError::ShaderNotFound(desc.file.clone()))?;
    for (k, v) in &desc.defines {
        // shaderc panics on interior NULs; reject them here instead.
        if k.contains('\0') || v.contains('\0') || k.is_empty() {
            return Err(GpuError::InvalidArgument(format!(
                "{}: bad macro define {k:?}={v:?}",
                desc.file
            )));
        }
    }
    let compiler = shaderc::Compiler::new().map_err(|e| GpuError::ShaderCompiler(e.to_string()))?;
    let mut options =
        shaderc::CompileOptions::new().map_err(|e| GpuError::ShaderCompiler(e.to_string()))?;
    options.set_target_env(
        shaderc::TargetEnv::Vulkan,
        shaderc::EnvVersion::Vulkan1_3 as u32,
    );
    options.set_source_language(shaderc::SourceLanguage::GLSL);
    // Unoptimised SPIR-V keeps the block and member names that the layout
    // checks (see `reflect`) look up.
    options.set_optimization_level(shaderc::OptimizationLevel::Zero);
    options.set_warnings_as_errors();
    for (k, v) in &desc.defines {
        options.add_macro_definition(k, Some(v));
    }
    options.set_include_callback(|requested, _kind, includer, _depth| {
        sources
            .resolve(requested, includer)
            .map(|(name, src)| shaderc::ResolvedInclude {
                resolved_name: name,
                content: src.to_owned(),
            })
            .ok_or_else(|| format!("cannot find include \"{requested}\" (from {includer})"))
    });
    match compiler.compile_into_spirv(source, kind, &desc.file, "main", Some(&options)) {
        Ok(artifact) => Ok(artifact.as_binary().to_vec()),
        Err(shaderc::Error::CompilationError(_, text)) => Err(parse_error(&desc.file, &text)),
        Err(e) => Err(GpuError::ShaderCompiler(format!("{}: {e}", desc.file))),
    }
}

/// Turns glslang's `file:line: error: text` into a [`GpuError::ShaderCompile`].
pub(crate) fn parse_error(file: &str, text: &str) -> GpuError {
    let first = text
        .lines()
        .find(|l| l.contains(": error:"))
        .or_else(|| text.lines().next())
        .unwrap_or_default();
    let mut place = first.splitn(3, ':');
    let (f, line) = match (place.next(), place.next()) {
        (Some(f), Some(l)) => match l.trim().parse::<u32>() {
            Ok(n) => (f.to_owned(), n),
            Err(_) => (file.to_owned(), 0),
        },
        _ => (file.to_owned(), 0),
    };
    GpuError::ShaderCompile {
        file: f,
        line,
        message: text.trim().to_owned(),
    }
}

/// A shader module, destroyed on drop. Entry point `main`. Keeps its SPIR-V
/// (for the layout checks of [`super::reflect`]).
pub struct ShaderModule {
    device: Arc<Device>,
    raw: vk::ShaderModule,
    spirv: Vec<u32>,
}

impl ShaderModule {
    /// Creates a module from SPIR-V words (as [`compile`] returns them).
    pub fn new(device: &Arc<Device>, spirv: Vec<u32>) -> GpuResult<Self> {
        let info = vk::ShaderModuleCreateInfo::default().code(&spirv);
        // SAFETY: `device` is live (the caller's `Arc`); `info` points at
        // `spirv`, a whole number of u32 words that lives for the call (and
        // in `self` after). The code being valid SPIR-V is a valid-usage
        // rule, not a memory-safety one: modules come from shaderc, and the
        // validation layer checks the code.
        let raw = unsafe { device.raw().create_shader_module(&info, None)? };
        Ok(Self {
            device: device.clone(),
            raw,
            spirv,
        })
    }

    /// Compiles and creates in one step.
    pub fn compile(
        device: &Arc<Device>,
        sources: &ShaderSources,
        desc: &ShaderDesc,
    ) -> GpuResult<Self> {
        Self::new(device, compile(sources, desc)?)
    }

    /// The Vulkan handle, valid while `self` lives.
    pub fn raw(&self) -> vk::ShaderModule {
        self.raw
    }

    /// The module's SPIR-V words.
    pub fn spirv(&self) -> &[u32] {
        &self.spirv
    }

    /// The pipeline stage create info for this module as `stage`, entry
    /// point `main`; `self` must outlive the pipeline creation that uses it.
    pub fn stage_info(
        &self,
        stage: vk::ShaderStageFlags,
    ) -> vk::PipelineShaderStageCreateInfo<'static> {
        vk::PipelineShaderStageCreateInfo::default()
            .stage(stage)
            .module(self.raw)
            .name(c"main")
    }
}

impl Drop for ShaderModule {
    fn drop(&mut self) {
        // SAFETY: the module was created from `self.device` (kept alive by
        // the `Arc`) and is destroyed once, here; pipelines do not need
        // their modules after creation, and no creation call can be using it
        // (those borrow the `ShaderModule`).
        unsafe { self.device.raw().destroy_shader_module(self.raw, None) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_glslang_error_lines() {
        let e = parse_error(
            "a.vert",
            "inc/b.glsl:7: error: 'x' : undeclared identifier\n1 error generated.\n",
        );
        match e {
            GpuError::ShaderCompile {
                file,
                line,
                message,
            } => {
                assert_eq!(file, "inc/b.glsl");
                assert_eq!(line, 7);
                assert!(message.contains("undeclared identifier"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn includes_resolve_relative_then_root() {
        let s = ShaderSources {
            files: BTreeMap::new(),
        }
        .with("common/a.glsl", "A")
        .with("skin/b.glsl", "B")
        .with("skin/x.vert", "");
        assert_eq!(s.resolve("b.glsl", "skin/x.vert").map(|r| r.1), Some("B"));
        assert_eq!(
            s.resolve("../common/a.glsl", "skin/x.vert").map(|r| r.1),
            Some("A")
        );
        assert_eq!(
            s.resolve("common/a.glsl", "skin/x.vert").map(|r| r.1),
            Some("A")
        );
        assert!(s.resolve("nope.glsl", "skin/x.vert").is_none());
    }
}
