//! A planned kernel call, as the boundary runs it: every check made, its
//! claims known, its work estimated, ready to run once the door lets it in.

use crate::core::door::Claim;

/// A checked call of a kernel.
pub trait Call {
    /// The memory the call reads and writes, for the door.
    fn claims(&self) -> Vec<Claim>;
    /// `f` of the call's claims: of [`Call::claims`] unless the call lists
    /// them without allocating, as a small call's plan does.
    fn with_claims<R>(&self, f: impl FnOnce(&[Claim]) -> R) -> R {
        f(&self.claims())
    }
    /// An upper estimate of the call's work, in bytes of a plain copy.
    fn work(&self) -> usize;
    /// Runs the call. Its claims must be held.
    fn run(self) -> Result<(), String>;
    /// Why the library declines the call, which its contract allows, or
    /// `None` to run it: asked once the call is checked, before any claim.
    fn declined(&self) -> Option<String> {
        None
    }
}
