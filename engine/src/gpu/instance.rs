use std::ffi::{c_char, CStr, CString};
use std::sync::Arc;

use ash::vk;
use raw_window_handle::RawDisplayHandle;

use super::messenger::{self, Messenger};
use super::{GpuError, GpuResult, MessageLog};

/// The name of the Khronos validation layer, enabled when
/// [`InstanceDesc::validation`] is set.
pub const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// What to create an instance with. `Default` is right for tests and tools:
/// validation on in debug builds or when `VKSKIN_VALIDATION=1`, no surface.
#[derive(Clone, Debug)]
pub struct InstanceDesc {
    /// The application name passed to the driver (NULs become spaces).
    pub app_name: String,
    /// Enable `VK_LAYER_KHRONOS_validation` and the debug messenger. When
    /// set, a missing layer is an error ([`GpuError::ValidationLayerMissing`]),
    /// never a silent fallback.
    pub validation: bool,
    /// Synchronization validation (VK_EXT_validation_features), with `validation`.
    pub synchronization_validation: bool,
    /// The display a window surface will be made for: adds the WSI extensions.
    pub display: Option<RawDisplayHandle>,
}

impl Default for InstanceDesc {
    fn default() -> Self {
        Self {
            app_name: "vkskin".into(),
            validation: validation_default(),
            synchronization_validation: true,
            display: None,
        }
    }
}

/// On in debug builds, or when the environment sets `VKSKIN_VALIDATION=1`.
pub fn validation_default() -> bool {
    cfg!(debug_assertions)
        || std::env::var("VKSKIN_VALIDATION").is_ok_and(|v| v == "1" || v == "true")
}

/// The Vulkan instance with its debug messenger. The messenger is destroyed
/// only when the instance is, and devices hold an `Arc<Instance>`, so it
/// sees everything up to and including each device's leak report.
pub struct Instance {
    pub(crate) entry: ash::Entry,
    pub(crate) raw: ash::Instance,
    messenger: Option<Messenger>,
    log: MessageLog,
    validation: bool,
    surface_support: bool,
    /// Created here (destroyed on drop), or the host's (left alone).
    owned: bool,
}

impl Instance {
    /// Wraps an instance the host application created and keeps owning
    /// (see [`crate::embed`]): vkskin calls through it but never destroys
    /// it, and adds no debug messenger (the host's receives the layer's
    /// messages). The instance must be Vulkan 1.3.
    ///
    /// # Safety
    /// `entry` and `raw` must be valid, and `raw` must outlive every vkskin
    /// object made from it (the returned `Arc` and every device and
    /// resource holding it).
    pub unsafe fn from_host(entry: ash::Entry, raw: ash::Instance) -> Arc<Self> {
        Arc::new(Self {
            entry,
            raw,
            messenger: None,
            log: MessageLog::default(),
            validation: false,
            surface_support: false,
            owned: false,
        })
    }

    /// Loads the system Vulkan loader and creates a Vulkan 1.3 instance:
    /// with the validation layer, its debug messenger (and synchronization
    /// validation) when `desc` asks for them, and the window-system
    /// extensions for `desc.display`. A requested layer or extension that is
    /// missing is an error.
    pub fn new(desc: &InstanceDesc) -> GpuResult<Arc<Self>> {
        // SAFETY: `Entry::load` runs the loader library's initialisation;
        // the system loader (libvulkan) is sound to load at any time, and the
        // returned `Entry` keeps the library loaded for as long as it and
        // the instance made from it (which stores it) live.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| GpuError::Loading(e.to_string()))?;
        // SAFETY: a global command on the loaded `entry`, no handles involved.
        let layers = unsafe { entry.enumerate_instance_layer_properties()? };
        let has_layer = layers
            .iter()
            .any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER));
        if desc.validation && !has_layer {
            return Err(GpuError::ValidationLayerMissing);
        }
        // SAFETY: a global command on the loaded `entry`, no handles involved.
        let available: Vec<CString> =
            unsafe { entry.enumerate_instance_extension_properties(None)? }
                .iter()
                .filter_map(|e| e.extension_name_as_c_str().ok().map(CStr::to_owned))
                .collect();
        let mut extensions: Vec<*const c_char> = Vec::new();
        if let Some(display) = desc.display {
            let wsi = ash_window::enumerate_required_extensions(display)?;
            extensions.extend_from_slice(wsi);
        }
        let log = MessageLog::default();
        let mut sync_features = Vec::new();
        let mut layer_names: Vec<*const c_char> = Vec::new();
        if desc.validation {
            if !available
                .iter()
                .any(|e| e.as_c_str() == ash::ext::debug_utils::NAME)
            {
                return Err(GpuError::MissingExtension("VK_EXT_debug_utils".into()));
            }
            extensions.push(ash::ext::debug_utils::NAME.as_ptr());
            layer_names.push(VALIDATION_LAYER.as_ptr());
            if desc.synchronization_validation {
                // The extension is provided by the layer itself.
                // SAFETY: a global command on the loaded `entry`; the layer
                // name is a static NUL-terminated string.
                let from_layer = unsafe {
                    entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER))?
                };
                let has = from_layer.iter().any(|e| {
                    e.extension_name_as_c_str()
                        .is_ok_and(|n| n == ash::ext::validation_features::NAME)
                });
                if !has {
                    return Err(GpuError::MissingExtension(
                        "VK_EXT_validation_features (from the validation layer)".into(),
                    ));
                }
                extensions.push(ash::ext::validation_features::NAME.as_ptr());
                sync_features.push(vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION);
            }
        }
        let app_name = CString::new(desc.app_name.replace('\0', " "))
            .map_err(|e| GpuError::InvalidArgument(e.to_string()))?;
        let app = vk::ApplicationInfo::default()
            .application_name(&app_name)
            .engine_name(c"vkskin")
            .api_version(vk::API_VERSION_1_3);
        let mut features =
            vk::ValidationFeaturesEXT::default().enabled_validation_features(&sync_features);
        // Chained so that instance creation and destruction are reported too.
        let mut chained = messenger::create_info(&log);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layer_names)
            .enabled_extension_names(&extensions);
        if desc.validation {
            info = info.push_next(&mut chained);
            if !sync_features.is_empty() {
                info = info.push_next(&mut features);
            }
        }
        // SAFETY: every pointer in `info` refers to locals alive for the call
        // (`app`, `app_name`, `layer_names`, `extensions` whose names are
        // static or owned by the loader, and the chained `chained` and
        // `features`); the messenger create info in the chain points at
        // `log`'s shared payload, which the instance keeps (in `self.log`)
        // past its own destruction.
        let raw = unsafe { entry.create_instance(&info, None)? };
        let messenger = if desc.validation {
            match Messenger::new(&entry, &raw, &log) {
                Ok(m) => Some(m),
                Err(e) => {
                    // SAFETY: `raw` was created above and never handed out;
                    // nothing was created from it (the messenger failed),
                    // so it is destroyed once with no children.
                    unsafe { raw.destroy_instance(None) };
                    return Err(e);
                }
            }
        } else {
            None
        };
        Ok(Arc::new(Self {
            entry,
            raw,
            messenger,
            log,
            validation: desc.validation,
            surface_support: desc.display.is_some(),
            owned: true,
        }))
    }

    /// Messages received so far (empty, forever, without validation).
    pub fn messages(&self) -> &MessageLog {
        &self.log
    }

    /// Whether the validation layer and messenger are on (always `false`
    /// for a host's instance).
    pub fn validation_enabled(&self) -> bool {
        self.validation
    }

    /// Whether the instance has the window-system extensions
    /// ([`InstanceDesc::display`] was given), so a [`super::Surface`] can be
    /// made.
    pub fn surface_support(&self) -> bool {
        self.surface_support
    }

    /// The ash instance (handle and function table), valid while `self`
    /// lives.
    pub fn raw(&self) -> &ash::Instance {
        &self.raw
    }

    /// The loaded Vulkan entry points.
    pub fn entry(&self) -> &ash::Entry {
        &self.entry
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // Devices hold an Arc of the instance, so they are all gone by now.
        if let Some(mut m) = self.messenger.take() {
            // SAFETY: `m` was created from `self.raw` (still alive: destroyed
            // below) and is destroyed once: `take` moved it out of `self`.
            unsafe { m.destroy() };
        }
        if self.owned {
            // SAFETY: the instance was created by `Instance::new` (`owned`)
            // and is destroyed once, here. Its children are gone: devices and
            // surfaces hold an `Arc<Instance>`, so they were dropped (and
            // destroyed) before this runs, and the messenger was destroyed
            // just above.
            unsafe { self.raw.destroy_instance(None) };
        }
    }
}
