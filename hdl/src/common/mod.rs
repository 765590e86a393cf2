//! Primitive blocks shared by the router, the NI and the link layer.

pub mod arbiter;
pub mod async_fifo;
pub mod axil_split;
pub mod crc32;
pub mod credit_counter;
pub mod fifo;
pub mod secded;
