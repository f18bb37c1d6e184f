//! What the windowed samples (`whitebox`, `strip`, `viewer`, `crowd`)
//! share: the frame loop in a window or headless ([`runner`]), whether a
//! display is there, `--list-devices`, the validation layer's verdict as
//! the exit code, error exits and `WIDTHxHEIGHT` arguments.

pub mod clips;
pub mod runner;

use std::fmt::Display;
use std::process::ExitCode;
use std::sync::Arc;

use vkskin::gpu::raw_window_handle::RawDisplayHandle;
use vkskin::gpu::{
    list_devices, validation_default, Device, DeviceDesc, Instance, InstanceDesc, MessageLog,
};

/// The options every windowed sample takes about the GPU (flattened into
/// its command line).
#[derive(clap::Args, Debug, Clone)]
pub struct GpuArgs {
    /// Present without vsync (IMMEDIATE or MAILBOX when offered).
    #[arg(long)]
    pub no_vsync: bool,
    /// List the Vulkan devices and exit.
    #[arg(long)]
    pub list_devices: bool,
    /// Device to use: index or name substring (default: $VKSKIN_DEVICE,
    /// else discrete > integrated > CPU).
    #[arg(long)]
    pub device: Option<String>,
    /// Force the validation layer on (it is always on in debug builds and
    /// with VKSKIN_VALIDATION=1).
    #[arg(long)]
    pub validation: bool,
}

impl GpuArgs {
    pub fn validation(&self) -> bool {
        self.validation || validation_default()
    }

    /// With `--list-devices`: prints them and gives the exit code.
    pub fn list_devices(&self, app: &str) -> Option<ExitCode> {
        self.list_devices
            .then(|| match print_devices(app, self.validation()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(app, &e),
            })
    }

    /// The runner's defaults with these settings.
    pub fn options(&self, name: &'static str) -> runner::Options {
        runner::Options {
            validation: self.validation(),
            device: self.device.clone(),
            vsync: !self.no_vsync,
            ..runner::Options::new(name)
        }
    }
}

/// Whether an X11 or Wayland display is named in the environment.
pub fn display_present() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// The instance a sample starts from: the validation layer as asked, with
/// synchronization validation whenever it is on; `display` for a window.
pub fn instance(
    app: &str,
    validation: bool,
    display: Option<RawDisplayHandle>,
) -> Result<Arc<Instance>, String> {
    Instance::new(&InstanceDesc {
        app_name: app.into(),
        validation,
        synchronization_validation: true,
        display,
    })
    .map_err(|e| e.to_string())
}

/// A device with no surface for offscreen rendering (`selector`: index or
/// name substring, as `--device`), and the instance's message log to judge
/// once the device is gone.
pub fn headless_device(
    app: &str,
    validation: bool,
    selector: Option<&str>,
) -> Result<(Arc<Device>, MessageLog), String> {
    let instance = instance(app, validation, None)?;
    let log = instance.messages().clone();
    let device = Device::new(
        &instance,
        &DeviceDesc {
            selector,
            surface: None,
        },
    )
    .map_err(|e| e.to_string())?;
    Ok((device, log))
}

/// Prints every Vulkan device, one a line (`--list-devices`).
pub fn print_devices(app: &str, validation: bool) -> Result<(), String> {
    let instance = instance(app, validation, None)?;
    for d in list_devices(&instance).map_err(|e| e.to_string())? {
        println!("{d}");
    }
    Ok(())
}

/// The messenger's verdict once everything (device, instance) is gone:
/// success, or failure with every warning and error printed.
pub fn report(app: &str, log: &MessageLog) -> ExitCode {
    let problems = log.problems();
    if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "{app}: the validation layer reported {} problem(s):\n{}",
            problems.len(),
            MessageLog::format(&problems)
        );
        ExitCode::FAILURE
    }
}

/// Prints `app: e` and fails.
pub fn fail(app: &str, e: &dyn Display) -> ExitCode {
    eprintln!("{app}: {e}");
    ExitCode::FAILURE
}

/// `WIDTHxHEIGHT`, each 1..=16384.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("size {s:?} is not WIDTHxHEIGHT"))?;
    let dim = |d: &str| -> Result<u32, String> {
        let v: u32 = d
            .trim()
            .parse()
            .map_err(|_| format!("size {s:?}: {d:?} is not a whole number"))?;
        if (1..=16384).contains(&v) {
            Ok(v)
        } else {
            Err(format!("size {s:?}: {v} is outside 1..=16384"))
        }
    };
    Ok((dim(w)?, dim(h)?))
}

/// A model's up axis in its file's terms (`--up y|z` of the viewer and
/// the crowd); `vkskin::assets::Model::file_axis` turns it into the
/// model's space.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Up {
    /// +Y up (glTF's convention).
    #[default]
    Y,
    /// +Z up.
    Z,
}

impl Up {
    /// The axis as a vector of the file's space (`Model::file_axis` turns
    /// it into the model's).
    pub fn vector(self) -> vkskin::glam::Vec3 {
        match self {
            Up::Y => vkskin::glam::Vec3::Y,
            Up::Z => vkskin::glam::Vec3::Z,
        }
    }

    /// The other axis.
    pub fn toggled(self) -> Self {
        match self {
            Up::Y => Up::Z,
            Up::Z => Up::Y,
        }
    }

    /// "Y" or "Z".
    pub fn name(self) -> &'static str {
        match self {
            Up::Y => "Y",
            Up::Z => "Z",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_bad_ones_say_why() {
        assert_eq!(parse_size("800x600"), Ok((800, 600)));
        assert_eq!(parse_size("32X24"), Ok((32, 24)));
        assert!(parse_size("800").unwrap_err().contains("WIDTHxHEIGHT"));
        assert!(parse_size("0x5").unwrap_err().contains("outside"));
        assert!(parse_size("ax5").unwrap_err().contains("whole number"));
    }
}
