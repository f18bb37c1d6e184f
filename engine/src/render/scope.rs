//! The dynamic-rendering scope the engine's own targets open.

use crate::gpu::{vk, Device};

/// Begins dynamic rendering into one colour (and optional depth) view,
/// clearing both, with the viewport and scissor set to the whole extent.
/// `cmd` must be a command buffer of `device` recording outside a rendering
/// scope, and the views live views of `device` in the attachment layouts.
pub(crate) fn begin_rendering(
    device: &Device,
    cmd: vk::CommandBuffer,
    extent: vk::Extent2D,
    color: vk::ImageView,
    depth: Option<vk::ImageView>,
    clear: [f32; 4],
) {
    let color_att = [vk::RenderingAttachmentInfo::default()
        .image_view(color)
        .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .clear_value(vk::ClearValue {
            color: vk::ClearColorValue { float32: clear },
        })];
    let depth_att = depth.map(|view| {
        vk::RenderingAttachmentInfo::default()
            .image_view(view)
            .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::DONT_CARE)
            .clear_value(vk::ClearValue {
                depth_stencil: vk::ClearDepthStencilValue {
                    depth: 1.0,
                    stencil: 0,
                },
            })
    });
    let area = vk::Rect2D {
        offset: vk::Offset2D::default(),
        extent,
    };
    let mut info = vk::RenderingInfo::default()
        .render_area(area)
        .layer_count(1)
        .color_attachments(&color_att);
    if let Some(d) = depth_att.as_ref() {
        info = info.depth_attachment(d);
    }
    let viewport = vk::Viewport {
        x: 0.0,
        y: 0.0,
        width: extent.width as f32,
        height: extent.height as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    };
    let d = device.raw();
    // SAFETY: `d` is live for the `&Device` borrow; `info` points at
    // `color_att` and `depth_att`, locals alive for the call; `cmd` is
    // recording outside a rendering scope and the views are live, in
    // attachment layouts (the callers' barriers), per the documented
    // contract. Viewport and scissor are set inside the scope just begun, on
    // pipelines that declare both dynamic.
    unsafe {
        d.cmd_begin_rendering(cmd, &info);
        d.cmd_set_viewport(cmd, 0, &[viewport]);
        d.cmd_set_scissor(cmd, 0, &[area]);
    }
}
