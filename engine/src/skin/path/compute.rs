//! The compute stage: a dispatch per batch skins every instance's vertices
//! into the frame's output buffer (`shaders/skin/compute.glsl`) before the
//! rendering scope; the plain pipeline then draws them (`output`).

use super::super::instance::ComputePush;
use super::{missing, Batch, SkinPath};
use crate::gpu::{memory_barrier, vk, GpuError, GpuResult, Pipeline, ShaderDesc, ShaderModule};
use crate::skin::mesh::PreparedMesh;
use crate::skin::storage::PushBytes;

impl SkinPath {
    pub(super) fn build_compute(
        &self,
        influences: u32,
        morph: bool,
        tangents: bool,
    ) -> GpuResult<Pipeline> {
        let layouts = self.compute_layouts.as_ref().ok_or_else(|| {
            GpuError::InvalidArgument(format!("path {} has no compute layout", self.desc.name))
        })?;
        let file = format!("skin/gen/{}.comp", self.desc.name);
        let sources = self.cfg.sources.clone().with(
            &file,
            self.main_source("skin/compute.glsl", "#define SKIN_STAGE_COMPUTE 1\n"),
        );
        let desc = ShaderDesc::new(&file).defines(&self.defines(influences, morph, tangents));
        let module = ShaderModule::compile(&self.device, &sources, &desc)?;
        Pipeline::compute(&self.device, &layouts.pipeline, &module)
    }

    /// Records the skinning dispatch of every batch with the barriers
    /// around it (earlier vertex reads before the writes; compute writes
    /// before vertex-attribute reads). Outside any rendering scope.
    pub(super) fn dispatch<'b>(
        &self,
        cmd: vk::CommandBuffer,
        frame: usize,
        batches: impl IntoIterator<Item = (&'b Batch, &'b PreparedMesh)>,
    ) -> GpuResult<()> {
        let d = &self.device;
        let slot = self.slot(frame)?;
        memory_barrier(
            d,
            cmd,
            vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT,
            vk::AccessFlags2::NONE,
            vk::PipelineStageFlags2::COMPUTE_SHADER,
            vk::AccessFlags2::SHADER_STORAGE_WRITE,
        );
        let layout = self
            .compute_layouts
            .as_ref()
            .ok_or_else(missing)?
            .pipeline
            .raw();
        let raw = d.raw();
        let bind = vk::PipelineBindPoint::COMPUTE;
        for (b, p) in batches {
            let pipeline = self
                .compute
                .iter()
                .find(|(k, _)| *k == (p.influences, p.morph.is_some(), p.has_tangents))
                .map(|(_, p)| p)
                .ok_or_else(missing)?;
            pipeline.bind(cmd);
            let mesh_set = p.compute_set.as_ref().ok_or_else(missing)?.1;
            let push = ComputePush {
                palette_base: b.palette_base as u32,
                palette_stride: b.stride as u32,
                vertex_count: b.vertex_count,
                instance_count: b.count,
                out_base: b.out_base,
                first_record: b.first_record,
            };
            let morph_set = match &p.morph {
                Some(_) => Some(self.morph_set(frame, p)?),
                None => None,
            };
            let bytes = PushBytes::new(&slot.push_prefix, &push)?;
            // SAFETY: `cmd` is recording outside a rendering scope (the
            // contract of `prepass`); the sets were allocated from the
            // compute layout's set layouts and written when their buffers
            // were made (the morph set just above, before this bind), and those buffers live until the frame retires;
            // the push range is the layout's (prefix + `ComputePush`).
            unsafe {
                raw.cmd_bind_descriptor_sets(cmd, bind, layout, 0, &[mesh_set], &[]);
                if slot.palette_set != vk::DescriptorSet::null() {
                    raw.cmd_bind_descriptor_sets(cmd, bind, layout, 1, &[slot.palette_set], &[]);
                }
                raw.cmd_bind_descriptor_sets(cmd, bind, layout, 2, &[slot.out_set], &[]);
                if let Some(set) = morph_set {
                    raw.cmd_bind_descriptor_sets(cmd, bind, layout, 3, &[set], &[]);
                }
                raw.cmd_push_constants(
                    cmd,
                    layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    bytes.as_slice(),
                );
                raw.cmd_dispatch(cmd, b.vertex_count.div_ceil(64), b.count, 1);
            }
        }
        memory_barrier(
            d,
            cmd,
            vk::PipelineStageFlags2::COMPUTE_SHADER,
            vk::AccessFlags2::SHADER_STORAGE_WRITE,
            vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT,
            vk::AccessFlags2::VERTEX_ATTRIBUTE_READ,
        );
        Ok(())
    }
}
