//! A decoded [`Image`] to a GPU [`Texture`], and the sampler a material
//! asks for.

use std::sync::Arc;

use crate::assets::texture::{Image, PixelFormat};
use crate::assets::{Filter, Sampler, Wrap};
use crate::gpu::{vk, Device, GpuError, GpuResult, SamplerDesc, Texture, TextureLevel};

/// The sRGB Vulkan format an image's levels are uploaded in.
pub fn gpu_format(format: PixelFormat) -> vk::Format {
    match format {
        PixelFormat::Rgba8 => vk::Format::R8G8B8A8_SRGB,
        PixelFormat::Bc1 => vk::Format::BC1_RGBA_SRGB_BLOCK,
        PixelFormat::Bc2 => vk::Format::BC2_SRGB_BLOCK,
        PixelFormat::Bc3 => vk::Format::BC3_SRGB_BLOCK,
    }
}

/// What [`upload_image`] made.
pub struct UploadedImage {
    /// The texture, every level of the image.
    pub texture: Arc<Texture>,
    /// Whether the levels went to the GPU block-compressed.
    pub compressed: bool,
}

/// Uploads `image` (every level it holds) in its sRGB format. A BC image
/// stays compressed when `keep_bc` is set, the device has
/// `textureCompressionBC` and the format can be sampled with linear
/// filtering and copied to; otherwise it is decoded to RGBA8 first.
pub fn upload_image(
    device: &Arc<Device>,
    name: &str,
    image: &Image,
    keep_bc: bool,
) -> GpuResult<UploadedImage> {
    let needs = vk::FormatFeatureFlags::SAMPLED_IMAGE
        | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR
        | vk::FormatFeatureFlags::TRANSFER_DST;
    let compressed = image.format.is_compressed()
        && keep_bc
        && device.features().texture_compression_bc
        && device
            .format_features(gpu_format(image.format))
            .contains(needs);
    let decoded;
    let image = if image.format.is_compressed() && !compressed {
        decoded = image
            .decode_to_rgba8()
            .map_err(|e| GpuError::InvalidArgument(format!("texture {name:?}: {e}")))?;
        &decoded
    } else {
        image
    };
    let levels: Vec<TextureLevel<'_>> = image
        .levels
        .iter()
        .map(|l| TextureLevel {
            width: l.width,
            height: l.height,
            data: &l.data,
        })
        .collect();
    let texture = Texture::upload(device, name, gpu_format(image.format), &levels)?;
    Ok(UploadedImage {
        texture: Arc::new(texture),
        compressed,
    })
}

/// The Vulkan sampler for a material's [`Sampler`] (one without mip maps
/// reads level 0 only).
pub fn sampler_desc(s: &Sampler) -> SamplerDesc {
    let filter = |f: Filter| match f {
        Filter::Nearest => vk::Filter::NEAREST,
        Filter::Linear => vk::Filter::LINEAR,
    };
    let wrap = |w: Wrap| match w {
        Wrap::Repeat => vk::SamplerAddressMode::REPEAT,
        Wrap::MirroredRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
        Wrap::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
    };
    SamplerDesc {
        mag: filter(s.mag),
        min: filter(s.min),
        mipmap: match s.mipmap {
            Some(Filter::Nearest) => vk::SamplerMipmapMode::NEAREST,
            _ => vk::SamplerMipmapMode::LINEAR,
        },
        mipmaps: s.mipmap.is_some(),
        wrap_u: wrap(s.wrap_s),
        wrap_v: wrap(s.wrap_t),
    }
}
