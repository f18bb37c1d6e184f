use std::fmt;

use ash::vk;

use super::{GpuError, GpuResult, Instance};

/// The environment variable that picks a device: an index into
/// [`list_devices`] or a case-insensitive substring of the device name.
pub const DEVICE_ENV: &str = "VKSKIN_DEVICE";

/// One physical device as the selection sees it.
#[derive(Clone, Debug)]
pub struct PhysicalDevice {
    /// The Vulkan handle, valid while the instance lives.
    pub raw: vk::PhysicalDevice,
    /// Position in the driver's enumeration order (what `--device N` means).
    pub index: usize,
    /// The driver's device name.
    pub name: String,
    /// Discrete, integrated, virtual, CPU or other.
    pub device_type: vk::PhysicalDeviceType,
    /// The Vulkan version the device supports (`vk::make_api_version`).
    pub api_version: u32,
    /// Every property the driver reports, limits included.
    pub properties: vk::PhysicalDeviceProperties,
    /// A queue family with graphics and compute (and so transfer).
    pub queue_family: Option<u32>,
}

impl PhysicalDevice {
    /// The device's limits.
    pub fn limits(&self) -> &vk::PhysicalDeviceLimits {
        &self.properties.limits
    }

    /// Usable by the engine: Vulkan 1.3 and a graphics + compute queue.
    pub fn is_suitable(&self) -> bool {
        self.api_version >= vk::API_VERSION_1_3 && self.queue_family.is_some()
    }

    fn type_rank(&self) -> u32 {
        match self.device_type {
            vk::PhysicalDeviceType::DISCRETE_GPU => 0,
            vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
            vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
            vk::PhysicalDeviceType::CPU => 3,
            _ => 4,
        }
    }
}

impl fmt::Display for PhysicalDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.device_type {
            vk::PhysicalDeviceType::DISCRETE_GPU => "discrete",
            vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated",
            vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual",
            vk::PhysicalDeviceType::CPU => "cpu",
            _ => "other",
        };
        write!(
            f,
            "{}: {} ({kind}, Vulkan {}.{}.{}){}",
            self.index,
            self.name,
            vk::api_version_major(self.api_version),
            vk::api_version_minor(self.api_version),
            vk::api_version_patch(self.api_version),
            if self.is_suitable() {
                ""
            } else {
                " [unsuitable]"
            }
        )
    }
}

/// Every physical device, in the driver's order.
pub fn list_devices(instance: &Instance) -> GpuResult<Vec<PhysicalDevice>> {
    // SAFETY: `instance.raw` is live for the `&Instance` borrow.
    let raws = unsafe { instance.raw.enumerate_physical_devices()? };
    Ok(raws
        .into_iter()
        .enumerate()
        .map(|(index, raw)| {
            // SAFETY: `raw` was just enumerated from the live `instance.raw`.
            let properties = unsafe { instance.raw.get_physical_device_properties(raw) };
            // SAFETY: as above.
            let families = unsafe {
                instance
                    .raw
                    .get_physical_device_queue_family_properties(raw)
            };
            let want = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
            let queue_family = families
                .iter()
                .position(|f| f.queue_flags.contains(want) && f.queue_count > 0)
                .map(|i| i as u32);
            PhysicalDevice {
                raw,
                index,
                name: properties
                    .device_name_as_c_str()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                device_type: properties.device_type,
                api_version: properties.api_version,
                properties,
                queue_family,
            }
        })
        .collect())
}

/// Picks a device: `selector` (an index or a name substring) when given,
/// else `$VKSKIN_DEVICE`, else the first suitable discrete, then integrated,
/// then virtual, then CPU device.
pub fn select_device(instance: &Instance, selector: Option<&str>) -> GpuResult<PhysicalDevice> {
    let devices = list_devices(instance)?;
    let env = std::env::var(DEVICE_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty());
    match selector.map(str::to_owned).or(env) {
        Some(sel) => pick(&devices, sel.trim()),
        None => devices
            .iter()
            .filter(|d| d.is_suitable())
            .min_by_key(|d| (d.type_rank(), d.index))
            .cloned()
            .ok_or_else(|| GpuError::NoDevice(format!(" among: {}", describe(&devices)))),
    }
}

fn pick(devices: &[PhysicalDevice], sel: &str) -> GpuResult<PhysicalDevice> {
    let found = match sel.parse::<usize>() {
        Ok(i) => devices.get(i),
        Err(_) => {
            let s = sel.to_lowercase();
            devices.iter().find(|d| d.name.to_lowercase().contains(&s))
        }
    };
    match found {
        Some(d) if d.is_suitable() => Ok(d.clone()),
        Some(d) => Err(GpuError::NoDevice(format!(
            ": {d} lacks Vulkan 1.3 or a graphics+compute queue"
        ))),
        None => Err(GpuError::DeviceNotFound {
            selector: sel.to_owned(),
            available: describe(devices),
        }),
    }
}

fn describe(devices: &[PhysicalDevice]) -> String {
    if devices.is_empty() {
        return "none".into();
    }
    devices
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}
