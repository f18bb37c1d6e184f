use std::ffi::{c_void, CStr};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;

use super::GpuResult;

/// Severity of a debug-utils message, ordered from chatty to fatal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Diagnostic detail (the engine's messenger does not request it).
    Verbose,
    /// Informational (e.g. object creation, loader messages).
    Info,
    /// Likely misuse or a performance problem.
    Warning,
    /// A violated valid-usage rule or a driver error.
    Error,
}

impl Severity {
    fn from_vk(s: vk::DebugUtilsMessageSeverityFlagsEXT) -> Self {
        if s.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
            Self::Error
        } else if s.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
            Self::Warning
        } else if s.contains(vk::DebugUtilsMessageSeverityFlagsEXT::INFO) {
            Self::Info
        } else {
            Self::Verbose
        }
    }

    /// Warnings and errors fail tests and samples; info and verbose do not.
    pub fn is_problem(self) -> bool {
        self >= Self::Warning
    }
}

/// One message from the validation layer (or the loader, or a driver).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Position in the log, counting from zero at instance creation.
    pub seq: usize,
    /// How serious the message is.
    pub severity: Severity,
    /// General, validation or performance message.
    pub kind: vk::DebugUtilsMessageTypeFlagsEXT,
    /// The layer's VUID or check name, e.g. `SYNC-HAZARD-WRITE-AFTER-WRITE`.
    pub id_name: String,
    /// The layer's numeric message id (a hash of the VUID).
    pub id_number: i32,
    /// The message text.
    pub text: String,
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{:?}] {} (0x{:08x}): {}",
            self.severity, self.id_name, self.id_number as u32, self.text
        )
    }
}

/// Every message the instance's messenger received, in order. Cloning shares
/// the log. Each [`super::Instance`] has its own, so tests running in
/// parallel (each with its own instance) never see each other's messages.
#[derive(Clone, Debug, Default)]
pub struct MessageLog {
    inner: Arc<Mutex<Vec<Message>>>,
}

impl MessageLog {
    fn lock(&self) -> MutexGuard<'_, Vec<Message>> {
        // A poisoned lock only means a panic elsewhere; the log is still whole.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, mut m: Message) {
        let mut log = self.lock();
        m.seq = log.len();
        log.push(m);
    }

    /// Number of messages so far: a mark for [`MessageLog::since`].
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no message was received.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of every message, in order.
    pub fn all(&self) -> Vec<Message> {
        self.lock().clone()
    }

    /// Messages recorded after `mark` (a value of [`MessageLog::len`]).
    pub fn since(&self, mark: usize) -> Vec<Message> {
        self.lock().iter().skip(mark).cloned().collect()
    }

    /// Warnings and errors: what makes a test or a sample fail.
    pub fn problems(&self) -> Vec<Message> {
        self.lock()
            .iter()
            .filter(|m| m.severity.is_problem())
            .cloned()
            .collect()
    }

    /// Messages whose id or text contains `needle`.
    pub fn matching(&self, needle: &str) -> Vec<Message> {
        self.lock()
            .iter()
            .filter(|m| m.id_name.contains(needle) || m.text.contains(needle))
            .cloned()
            .collect()
    }

    /// One message per line, for assertion failures.
    pub fn format(messages: &[Message]) -> String {
        messages
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Records a message that did not come from Vulkan (tests of the log).
    pub fn record(&self, severity: Severity, id_name: &str, text: &str) {
        self.push(Message {
            seq: 0,
            severity,
            kind: vk::DebugUtilsMessageTypeFlagsEXT::GENERAL,
            id_name: id_name.to_owned(),
            id_number: 0,
            text: text.to_owned(),
        });
    }
}

/// The create-info shared by the messenger proper and the one chained into
/// instance creation (which covers vkCreateInstance / vkDestroyInstance).
/// `log` must outlive every use of the returned struct by Vulkan.
pub(crate) fn create_info(log: &MessageLog) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::INFO
                | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(callback))
        .user_data(Arc::as_ptr(&log.inner) as *mut c_void)
}

/// The debug-utils callback: turns a message into a [`Message`], logs it
/// and appends it to the [`MessageLog`] behind `user`.
///
/// # Safety
/// Only Vulkan calls this, through a messenger made by [`create_info`]:
/// `data`, when not null, must point at valid callback data (with null or
/// NUL-terminated strings) for the duration of the call, and `user`, when
/// not null, must be the `Mutex` payload of a live `MessageLog`'s `Arc`.
unsafe extern "system" fn callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user.is_null() {
        return vk::FALSE;
    }
    // SAFETY: both are non-null (checked above). Vulkan passes a valid
    // callback-data pointer for the duration of the call; `user` is the
    // `Arc<Mutex<..>>` payload of a MessageLog that the Instance keeps alive
    // (in its `log` field) until after the messenger and instance are
    // destroyed. Both are only read through shared references.
    let (data, inner) = unsafe { (&*data, &*(user as *const Mutex<Vec<Message>>)) };
    let text = |p: *const std::ffi::c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: `p` is non-null (checked above) and, as a string of the
            // callback data, NUL-terminated and valid for the call, which
            // outlasts this borrow (the string is copied out at once).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let m = Message {
        seq: 0,
        severity: Severity::from_vk(severity),
        kind,
        id_name: text(data.p_message_id_name),
        id_number: data.message_id_number,
        text: text(data.p_message),
    };
    match m.severity {
        Severity::Error => log::error!("vulkan: {m}"),
        Severity::Warning => log::warn!("vulkan: {m}"),
        Severity::Info => log::debug!("vulkan: {m}"),
        Severity::Verbose => log::trace!("vulkan: {m}"),
    }
    let mut log = inner.lock().unwrap_or_else(|e| e.into_inner());
    let mut m = m;
    m.seq = log.len();
    log.push(m);
    // Never abort the call: tests want to see what happens next.
    vk::FALSE
}

/// The debug-utils messenger proper. Owned by [`super::Instance`], which
/// destroys it just before the instance, so it outlives every device.
pub(crate) struct Messenger {
    loader: ash::ext::debug_utils::Instance,
    raw: vk::DebugUtilsMessengerEXT,
}

impl Messenger {
    pub(crate) fn new(
        entry: &ash::Entry,
        instance: &ash::Instance,
        log: &MessageLog,
    ) -> GpuResult<Self> {
        let loader = ash::ext::debug_utils::Instance::new(entry, instance);
        let info = create_info(log);
        // SAFETY: `instance` is live (borrowed for the call) and was created
        // with VK_EXT_debug_utils enabled, so `loader`'s functions are
        // loaded; `info` is a local. Its user data points at `log`'s payload,
        // which the caller (`Instance::new`) keeps in the instance, so it
        // outlives the messenger.
        let raw = unsafe { loader.create_debug_utils_messenger(&info, None)? };
        Ok(Self { loader, raw })
    }

    /// Destroys the messenger.
    ///
    /// # Safety
    /// Call once, while the instance the messenger was created from is
    /// still alive (before it is destroyed).
    pub(crate) unsafe fn destroy(&mut self) {
        // SAFETY: `self.raw` was created by `self.loader`'s instance, which
        // is alive, and is destroyed only this once: this function's
        // contract.
        unsafe { self.loader.destroy_debug_utils_messenger(self.raw, None) };
        self.raw = vk::DebugUtilsMessengerEXT::null();
    }
}
