//! TEMPORARY STUB (replaced by the real bridge module): identity translations.
#![allow(dead_code, unused_variables)]
use serde_json::Value;

pub use exchange::envelope::A2aVersion as Dialect;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method { SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, CreatePushConfig, GetPushConfig, ListPushConfigs, DeletePushConfig, GetExtendedAgentCard }
impl Method {
    pub fn from_name(dialect: Dialect, name: &str) -> Option<Method> {
        Some(match name { "SendMessage" => Method::SendMessage, "SendStreamingMessage" => Method::SendStreamingMessage, "GetTask" => Method::GetTask, "ListTasks" => Method::ListTasks, "CancelTask" => Method::CancelTask, "SubscribeToTask" => Method::SubscribeToTask, _ => return None })
    }
    pub fn name(self, dialect: Dialect) -> Option<&'static str> {
        Some(match self { Method::SendMessage => "SendMessage", Method::SendStreamingMessage => "SendStreamingMessage", Method::GetTask => "GetTask", Method::ListTasks => "ListTasks", Method::CancelTask => "CancelTask", Method::SubscribeToTask => "SubscribeToTask", _ => return None })
    }
    pub fn is_streaming(self) -> bool { matches!(self, Method::SendStreamingMessage | Method::SubscribeToTask) }
}
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bridge: {0}")]
pub struct BridgeError(String);
pub fn params_to_v1(method: Method, params: Value) -> Result<Value, BridgeError> { Ok(params) }
pub fn params_to_v03(method: Method, params: Value) -> Result<Value, BridgeError> { Ok(params) }
pub fn result_to_v03(method: Method, result: Value) -> Result<Value, BridgeError> { Ok(result) }
pub fn result_to_v1(method: Method, result: Value) -> Result<Value, BridgeError> { Ok(result) }
pub fn event_to_v03(event: Value) -> Result<Value, BridgeError> { Ok(event) }
pub fn event_to_v1(event: Value) -> Result<Value, BridgeError> { Ok(event) }
pub fn card_to_v1(card: Value) -> Result<Value, BridgeError> { Ok(card) }
pub fn card_to_v03(card: Value) -> Result<Value, BridgeError> { Ok(card) }
pub const LOSSY: &[(&str, &str)] = &[];
pub fn version_of_card(card: &Value) -> exchange::envelope::A2aVersion { exchange::envelope::A2aVersion::V1_0 }
