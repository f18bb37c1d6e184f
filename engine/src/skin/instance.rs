use bytemuck::{Pod, Zeroable};
use glam::Affine3A;

/// Per-instance vertex stream (binding 3, input rate instance; locations
/// 7-10 of `shaders/skin/instance.glsl`): the model-to-world matrix as three
/// rows and a colour tint. Palettes stay in model space, so precision does
/// not suffer far from the origin; only this moves the skinned vertex.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct InstanceRecord {
    /// The model-to-world matrix's top three rows (row-major; the
    /// translation in w): locations 7-9, `inst_row0..2`.
    pub rows: [[f32; 4]; 3],
    /// Linear RGB multiplier in xyz; w unused.
    pub tint: [f32; 4],
}

impl Default for InstanceRecord {
    fn default() -> Self {
        Self::new(&Affine3A::IDENTITY, [1.0; 4])
    }
}

impl InstanceRecord {
    /// The record of an instance placed by `model`, coloured by `tint`.
    pub fn new(model: &Affine3A, tint: [f32; 4]) -> Self {
        let m = model.matrix3;
        let t = model.translation;
        Self {
            rows: [
                [m.x_axis.x, m.y_axis.x, m.z_axis.x, t.x],
                [m.x_axis.y, m.y_axis.y, m.z_axis.y, t.y],
                [m.x_axis.z, m.y_axis.z, m.z_axis.z, t.z],
            ],
            tint,
        }
    }
}

/// Push constants of the vertex stage's non-push storages (host mirror of
/// `DrawPush` in `shaders/skin/push.glsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct DrawPush {
    /// First vec4 of the draw's first instance's palette (partition),
    /// relative to the bound window.
    pub palette_base: u32,
    /// vec4s from one instance's palette block to the next.
    pub palette_stride: u32,
    /// The draw's firstInstance.
    pub first_instance: u32,
    /// Motion: vec4s from an instance's palette (partition) to its
    /// previous one (half the stride on the instanced storages, the part's
    /// aligned palette on the windowed ubo); 0 without motion.
    pub previous_offset: u32,
}

/// Push constants of the compute stage (host mirror of `ComputePush` in
/// `shaders/skin/compute.glsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ComputePush {
    /// First vec4 of the batch's first instance's palette in the palette
    /// storage.
    pub palette_base: u32,
    /// vec4s from one instance's palette block to the next.
    pub palette_stride: u32,
    /// Mesh vertices per instance (the dispatch's x range).
    pub vertex_count: u32,
    /// Instances in the batch (the dispatch's y range).
    pub instance_count: u32,
    /// Output vertex of instance 0's vertex 0.
    pub out_base: u32,
    /// Instance record of the batch's instance 0 (where its morph header
    /// is).
    pub first_record: u32,
}
