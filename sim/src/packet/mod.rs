//! Packet format shared by the RTL, the golden models and the simulator.

/// A getter and a checked setter of one header or footer field: the setter
/// refuses a value its layout cannot hold, naming the field.
macro_rules! setter {
    ($(#[$doc:meta])* $set:ident, $get:ident, $field:ident, $ty:ty, $layout:ident) => {
        $(#[$doc])*
        pub fn $get(&self) -> $ty {
            self.$field
        }
        /// Set the field; a value that does not fit is an error naming it.
        pub fn $set(&mut self, v: $ty) -> Result<&mut Self> {
            $layout.check(v as u64)?;
            self.$field = v;
            Ok(self)
        }
    };
}

pub mod coords;
pub mod footer;
pub mod header;
