//! A bounded task store for the peer's A2A handler.
//!
//! `DefaultRequestHandler` records a task for every `SendMessage`, even when
//! the executor answers with a plain message, and `InMemoryTaskStore` never
//! forgets one. A peer under a benchmark would grow without bound (and keep
//! every caller's input in task history). This store keeps two generations
//! of `InMemoryTaskStore`: when the current one has taken `capacity` tasks
//! it becomes the previous one and the old previous one is dropped. Lookups
//! see both generations, so a task stays reachable for at least `capacity`
//! further calls; listing shows the current generation only.

use a2a::{error_code, A2AError, ListTasksRequest, ListTasksResponse, Task};
use a2a_server::task_store::TaskVersion;
use a2a_server::{InMemoryTaskStore, TaskStore};
use async_trait::async_trait;
use std::sync::Arc;
use tokio::sync::Mutex;

/// Default tasks per generation.
pub const DEFAULT_CAPACITY: usize = 1024;

struct Generations {
    current: Arc<InMemoryTaskStore>,
    previous: Arc<InMemoryTaskStore>,
    created: usize,
}

/// See the module doc.
pub struct BoundedTaskStore {
    capacity: usize,
    gens: Mutex<Generations>,
}

impl BoundedTaskStore {
    /// A store holding between `capacity` and `2 * capacity` tasks.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            gens: Mutex::new(Generations {
                current: Arc::new(InMemoryTaskStore::new()),
                previous: Arc::new(InMemoryTaskStore::new()),
                created: 0,
            }),
        }
    }

    async fn both(&self) -> (Arc<InMemoryTaskStore>, Arc<InMemoryTaskStore>) {
        let g = self.gens.lock().await;
        (g.current.clone(), g.previous.clone())
    }
}

impl Default for BoundedTaskStore {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY)
    }
}

fn not_found(e: &A2AError) -> bool {
    e.code == error_code::TASK_NOT_FOUND
}

#[async_trait]
impl TaskStore for BoundedTaskStore {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let current = {
            let mut g = self.gens.lock().await;
            if g.created >= self.capacity {
                g.previous = std::mem::replace(&mut g.current, Arc::new(InMemoryTaskStore::new()));
                g.created = 0;
            }
            g.created += 1;
            g.current.clone()
        };
        current.create(task).await
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let (current, previous) = self.both().await;
        match current.update(task.clone()).await {
            Err(e) if not_found(&e) => previous.update(task).await,
            other => other,
        }
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        let (current, previous) = self.both().await;
        match current.get(task_id).await? {
            Some(t) => Ok(Some(t)),
            None => previous.get(task_id).await,
        }
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        let (current, _) = self.both().await;
        current.list(req).await
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        let (current, previous) = self.both().await;
        match current.begin_cancel(task_id).await {
            Err(e) if not_found(&e) => previous.begin_cancel(task_id).await,
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::{TaskState, TaskStatus};

    fn task(id: &str) -> Task {
        Task {
            id: id.into(),
            context_id: "c".into(),
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: None,
            },
            artifacts: None,
            history: None,
            metadata: None,
        }
    }

    #[tokio::test]
    async fn old_generations_are_forgotten() {
        let store = BoundedTaskStore::new(2);
        for i in 0..5 {
            store.create(task(&format!("t{i}"))).await.unwrap();
        }
        // Generations: previous = {t2, t3}, current = {t4}.
        assert!(store.get("t0").await.unwrap().is_none());
        assert!(store.get("t1").await.unwrap().is_none());
        assert!(store.get("t2").await.unwrap().is_some());
        assert!(store.get("t4").await.unwrap().is_some());
        let mut t2 = task("t2");
        t2.status.state = TaskState::Working;
        store.update(t2).await.unwrap();
        assert_eq!(
            store.get("t2").await.unwrap().unwrap().status.state,
            TaskState::Working
        );
        assert!(store.update(task("t0")).await.is_err());
    }
}
