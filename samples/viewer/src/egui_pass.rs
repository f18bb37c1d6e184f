//! egui drawn through `egui-ash-renderer` (dynamic rendering) inside the
//! window's rendering scope, after the scene.
//!
//! The renderer keeps one vertex/index buffer pair per "frame in flight" and
//! rotates them on every draw; it is given [`MESH_SLOTS`] slots, more than
//! the viewer ever has frames in flight (times two draws per frame with a
//! screenshot), so a slot is rewritten only after the frame that read it has
//! retired. Texture uploads and frees happen with the device idle (they are
//! rare: the font atlas), and partial updates are turned into whole-texture
//! uploads from a CPU copy, since the renderer's partial upload starts from
//! an undefined layout.

use std::collections::HashMap;
use std::sync::Arc;

use egui::epaint::{ImageDelta, Primitive};
use egui::{ClippedPrimitive, ImageData, TextureId, TexturesDelta};
use egui_ash_renderer::{DynamicRendering, Options, Renderer};
use vkskin::gpu::{vk, CommandPool, Device};

/// Vertex/index buffer slots of the renderer.
pub const MESH_SLOTS: usize = 8;

pub struct EguiPass {
    renderer: Renderer,
    pool: CommandPool,
    device: Arc<Device>,
    images: HashMap<TextureId, egui::ColorImage>,
}

impl EguiPass {
    pub fn new(
        device: &Arc<Device>,
        color_format: vk::Format,
        depth_format: vk::Format,
    ) -> Result<Self, String> {
        let renderer = Renderer::with_default_allocator(
            device.instance().raw(),
            device.physical().raw,
            device.raw().clone(),
            DynamicRendering {
                color_attachment_format: color_format,
                depth_attachment_format: Some(depth_format),
            },
            Options {
                in_flight_frames: MESH_SLOTS,
                enable_depth_test: false,
                enable_depth_write: false,
                srgb_framebuffer: false,
            },
        )
        .map_err(|e| format!("egui renderer: {e}"))?;
        let pool = CommandPool::new(device, true).map_err(|e| e.to_string())?;
        Ok(Self {
            renderer,
            pool,
            device: device.clone(),
            images: HashMap::new(),
        })
    }

    /// Applies egui's texture changes (before recording a frame that uses
    /// them). Idles the device when there are any.
    pub fn textures(&mut self, delta: &TexturesDelta) -> Result<(), String> {
        if delta.set.is_empty() && delta.free.is_empty() {
            return Ok(());
        }
        self.device.wait_idle().map_err(|e| e.to_string())?;
        let mut whole = Vec::with_capacity(delta.set.len());
        for (id, d) in &delta.set {
            let ImageData::Color(patch) = &d.image;
            match d.pos {
                None => {
                    self.images.insert(*id, (**patch).clone());
                }
                Some([x0, y0]) => {
                    let image = self
                        .images
                        .get_mut(id)
                        .ok_or_else(|| format!("egui: a patch for unknown texture {id:?}"))?;
                    let [w, h] = image.size;
                    let [pw, ph] = patch.size;
                    if x0 + pw > w || y0 + ph > h {
                        return Err(format!(
                            "egui: patch {pw}x{ph} at {x0},{y0} outside texture {w}x{h}"
                        ));
                    }
                    for y in 0..ph {
                        let dst = (y0 + y) * w + x0;
                        image.pixels[dst..dst + pw]
                            .copy_from_slice(&patch.pixels[y * pw..(y + 1) * pw]);
                    }
                }
            }
            if let Some(image) = self.images.get(id) {
                whole.push((*id, ImageDelta::full(image.clone(), d.options)));
            }
        }
        let queue = *self.device.queue();
        self.renderer
            .set_textures(queue, self.pool.raw(), &whole)
            .map_err(|e| format!("egui textures: {e}"))?;
        for id in &delta.free {
            self.images.remove(id);
        }
        self.renderer
            .free_textures(&delta.free)
            .map_err(|e| format!("egui textures: {e}"))
    }

    /// Records the panel's primitives inside a rendering scope of `extent`.
    pub fn draw(
        &mut self,
        cmd: vk::CommandBuffer,
        extent: vk::Extent2D,
        pixels_per_point: f32,
        primitives: &[ClippedPrimitive],
    ) -> Result<(), String> {
        // The renderer derives scissors from clip rectangles without
        // clamping them to the target; drop what lies wholly outside.
        let w = extent.width as f32 / pixels_per_point;
        let h = extent.height as f32 / pixels_per_point;
        let visible: Vec<ClippedPrimitive> = primitives
            .iter()
            .filter(|p| {
                let r = p.clip_rect;
                r.min.x < w
                    && r.min.y < h
                    && r.max.x > r.min.x.max(0.0)
                    && r.max.y > r.min.y.max(0.0)
                    && matches!(&p.primitive, Primitive::Mesh(m) if !m.indices.is_empty())
            })
            .cloned()
            .collect();
        self.renderer
            .cmd_draw(cmd, extent, pixels_per_point, &visible)
            .map_err(|e| format!("egui draw: {e}"))
    }
}
