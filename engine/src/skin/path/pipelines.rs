//! A path's pipelines: built on demand per permutation (influences,
//! polygon mode, morph, tangents), from its storage, encoding and stage GLSL; each
//! filled permutation also in a blending variant (alpha-blended
//! materials: blending on, depth writes off). The cull mode is dynamic
//! (a material's `double_sided`).

use super::input::vertex_input;
use super::{PipelineKey, SkinPath, PLAIN_VERTEX, SKINNED_FRAGMENT};
use crate::gpu::{
    is_srgb, vk, GpuResult, GraphicsOptions, GraphicsPipelineDesc, Pipeline, ShaderDesc,
    ShaderModule,
};
use crate::skin::registry::Stage;

impl SkinPath {
    pub(super) fn ensure_pipelines(
        &mut self,
        influences: u32,
        morph: bool,
        tangents: bool,
    ) -> GpuResult<()> {
        let vertex = self.desc.stage == Stage::Vertex;
        let key_influences = if vertex { influences } else { 0 };
        for polygon in self.polygon_modes() {
            let key = PipelineKey {
                influences: key_influences,
                polygon,
                morph: vertex && morph,
                tangents,
                blend: false,
            };
            if self.pipelines.iter().any(|(k, _)| *k == key) {
                continue;
            }
            let built = self.build_graphics(key)?;
            self.pipelines.extend(built);
        }
        let ck = (influences, morph, tangents);
        if self.desc.stage == Stage::Compute && !self.compute.iter().any(|(k, _)| *k == ck) {
            let p = self.build_compute(influences, morph, tangents)?;
            self.compute.push((ck, p));
        }
        Ok(())
    }

    /// A path's generated main file: `prelude` (the stage's defines), its
    /// storage, its encoding, then the stage file.
    pub(super) fn main_source(&self, stage_file: &str, prelude: &str) -> String {
        let mut s = format!("#version 460\n{prelude}");
        if let Some(st) = self.desc.storage {
            s += &format!("#include \"{}\"\n", st.shader());
        }
        s += &format!(
            "#include \"{}\"\n#include \"{stage_file}\"\n",
            self.desc.encoding.shader()
        );
        s
    }

    pub(super) fn defines(
        &self,
        influences: u32,
        morph: bool,
        tangents: bool,
    ) -> Vec<(String, String)> {
        let mut d = vec![
            ("INFLUENCES".into(), influences.to_string()),
            ("PALETTE_VEC4S".into(), self.window.max(1).to_string()),
        ];
        if morph {
            d.push(("MORPH".into(), "1".into()));
        }
        if self.cfg.motion {
            d.push(("MOTION".into(), "1".into()));
        }
        if tangents {
            d.push(("TANGENTS".into(), "1".into()));
        }
        d
    }

    /// The pipelines of `key` (built with `blend` false): the opaque one
    /// and, for filled polygons, the blending one.
    pub(super) fn build_graphics(
        &self,
        key: PipelineKey,
    ) -> GpuResult<Vec<(PipelineKey, Pipeline)>> {
        let d = &self.device;
        let vertex_stage = self.desc.stage == Stage::Vertex;
        let (file, sources) = if vertex_stage {
            let file = format!("skin/gen/{}.vert", self.desc.name);
            let src = self.main_source("skin/vertex.glsl", "");
            (file.clone(), self.cfg.sources.clone().with(&file, src))
        } else {
            (PLAIN_VERTEX.to_owned(), self.cfg.sources.clone())
        };
        let mut vdesc = ShaderDesc::new(&file);
        if vertex_stage {
            vdesc = vdesc.defines(&self.defines(key.influences, key.morph, key.tangents));
        } else {
            if self.cfg.motion {
                vdesc = vdesc.define("MOTION", 1);
            }
            if key.tangents {
                vdesc = vdesc.define("TANGENTS", 1);
            }
        }
        if self.cfg.capture {
            vdesc = vdesc.define("SKIN_CAPTURE", 1);
        }
        let vertex = ShaderModule::compile(d, &sources, &vdesc)?;
        let mut fdesc = ShaderDesc::new(SKINNED_FRAGMENT);
        if !is_srgb(self.cfg.color_format) {
            fdesc = fdesc.define("MATERIAL_TARGET_UNORM", 1);
        }
        if self.cfg.motion {
            fdesc = fdesc.define("MOTION", 1);
        }
        let fragment = ShaderModule::compile(d, &sources, &fdesc)?;
        let (bindings, attributes) = vertex_input(
            vertex_stage,
            key.influences,
            self.cfg.capture,
            self.cfg.motion,
            key.tangents,
        );
        let depth = self.cfg.depth_format != vk::Format::UNDEFINED;
        let mut out = Vec::with_capacity(2);
        let blends: &[bool] = if key.polygon == vk::PolygonMode::FILL {
            &[false, true]
        } else {
            &[false]
        };
        for &blend in blends {
            let p = Pipeline::graphics_with(
                d,
                &self.graphics_layout,
                &GraphicsPipelineDesc {
                    vertex: &vertex,
                    fragment: &fragment,
                    vertex_bindings: &bindings,
                    vertex_attributes: &attributes,
                    topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                    polygon_mode: key.polygon,
                    cull_mode: self.cfg.cull_mode,
                    front_face: vk::FrontFace::COUNTER_CLOCKWISE,
                    depth_test: depth,
                    depth_write: depth && !blend,
                    color_formats: &[self.cfg.color_format],
                    depth_format: self.cfg.depth_format,
                },
                &GraphicsOptions {
                    alpha_blend: blend,
                    dynamic_cull_mode: true,
                },
            )?;
            out.push((PipelineKey { blend, ..key }, p));
        }
        Ok(out)
    }
}
