//! What a kernel answers.

/// A kernel's answer: its work done, declined where its contract allows, or
/// refused before any write with a message that says what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Done,
    Declined(String),
    Refused(String),
}

impl Answer {
    /// The answer of a check: `Done` for `Ok`, a refusal naming `kernel` for
    /// `Err` (the name written out only then).
    pub fn of(kernel: impl std::fmt::Display, r: Result<(), String>) -> Answer {
        match r {
            Ok(()) => Answer::Done,
            Err(e) => Answer::Refused(format!("{kernel}: {e}")),
        }
    }
}
