//! Packet format shared by the RTL, the golden models and the simulator.

pub mod coords;
pub mod footer;
pub mod header;
