"""FedML 0.9.6's MPI FedProx (``backend: MPI``, ``federated_optimizer: FedProx``) trains its clients without the
proximal term: ``fedprox_mu`` has no effect, and the round is FedAvg's. Without fedtheory: FedML, torch, NumPy and
mpi4py only, under ``mpirun`` with FedML's own launcher, managers and MPI transport.

    apt-get install openmpi-bin libopenmpi-dev; pip install fedml==0.9.6 "setuptools<81" "sentry-sdk<2" mpi4py==4.1.2
    python fedml_mpi_fedprox.py        # mpirun -np 3 (a server and two clients) twice: 35 s each when idle

Each launch runs two rounds of ``FedML_FedProx_distributed`` (or ``FedML_FedAvg_distributed``) on two clients of a
linear least-squares model; rank 0 writes the new global model. The launcher's default client trainer,
``create_model_trainer(model, args)`` (``fedml/ml/trainer/trainer_creator.py``), is ``ModelTrainerCLS``, whose loss
has no proximal term; the single-process simulator uses ``FedProxModelTrainer`` (``fedml/ml/trainer/
fedprox_trainer.py``), which adds it. Expected (Li et al. 2020, eq. (2)): client k runs K SGD steps on
h_k(w) = F_k(w) + mu/2 ||w - w^t||^2, so mu = 10 gives another model than FedAvg's. Actual: FedAvg's model
(and FedML's MPI FedAvg is McMahan et al.'s round). The model's loss is the least squares 1/2 mean (Z w - y)^2, put in place of the trainer's
hard-coded ``nn.CrossEntropyLoss`` (the same substitution on every run, so it cannot explain equal results).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import types

import numpy as np
import torch

K, ETA, ROUNDS = 5, 0.1, 2  # two rounds: with comm_round = 1 FedML's clients never call finish()
Z = [np.array([[1.0, 0.5], [0.0, 2.0], [1.5, -1.0]]), np.array([[2.0, 1.0], [-1.0, 0.5]])]
Y = [np.array([1.0, -2.0, 0.5]), np.array([3.0, 1.0])]
X0 = np.array([0.5, -0.5])


class HalfMSE(torch.nn.Module):
    def forward(self, out, target):
        return 0.5 * torch.mean((out.view(-1) - target) ** 2)


class Targets(torch.Tensor):
    def long(self, *args, **kwargs):  # ModelTrainerCLS casts labels with .long(); least squares keeps them
        return self


def model():
    torch.set_default_dtype(torch.float64)
    net = torch.nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        net.weight[:] = torch.tensor(X0)[None, :]
    return net


def rank_main(optimizer: str, mu: float, out: str) -> None:
    """One rank of an mpirun: FedML's own launcher for ``optimizer`` with fedprox_mu = ``mu``."""
    import fedml.ml.trainer.my_model_trainer_classification as cls
    from fedml.ml.aggregator.aggregator_creator import create_server_aggregator
    from mpi4py import MPI

    cls.nn = types.SimpleNamespace(CrossEntropyLoss=HalfMSE)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    args = types.SimpleNamespace(
        federated_optimizer=optimizer, backend="MPI", client_optimizer="sgd", learning_rate=ETA, epochs=K,
        comm_round=ROUNDS, client_num_in_total=2, client_num_per_round=2, frequency_of_the_test=1 << 30,
        dataset="kit", weight_decay=0.0, batch_size=3, fedprox_mu=mu, ci=0, enable_wandb=False)
    train = {i: [(torch.tensor(Z[i]), torch.tensor(Y[i]).as_subclass(Targets))] for i in range(2)}
    dataset = [5, 0, None, None, {0: 3, 1: 2}, train, {0: None, 1: None}, 1]
    net = model()
    server = create_server_aggregator(net, args)
    server.test_all = lambda *a, **k: True  # no test set: skip the server's evaluation
    if optimizer == "FedProx":
        from fedml.simulation.mpi.fedprox.FedProxAPI import FedML_FedProx_distributed as launch
    else:
        from fedml.simulation.mpi.fedavg.FedAvgAPI import FedML_FedAvg_distributed as launch
    launch(args, rank, size, comm, torch.device("cpu"), dataset, net, server_aggregator=server if rank == 0 else None)
    if rank == 0:
        with open(out, "w") as f:
            json.dump(server.model.weight.detach().numpy().reshape(-1).tolist(), f)
    os._exit(0)  # FedML's finish() has already called MPI.Finalize


def expected(mu: float) -> np.ndarray:
    """ROUNDS of Li et al.'s round: K gradient steps on F_k + mu/2 ||w - x||^2 per client, then the n_k/n
    average."""
    x = X0.copy()
    for _ in range(ROUNDS):
        ys = []
        for z, y in zip(Z, Y):
            w = x.copy()
            for _ in range(K):
                w = w - ETA * (z.T @ (z @ w - y) / len(y) + mu * (w - x))
            ys.append(w)
        x = (3 * ys[0] + 2 * ys[1]) / 5
    return x


def launch(optimizer: str, mu: float) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "x.json")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        subprocess.run(["mpirun", "--oversubscribe", "-np", "3", sys.executable, __file__, "--rank", optimizer,
                        str(mu), out], check=True, env=env, capture_output=True, timeout=120, cwd=tmp)
        with open(out) as f:
            return np.array(json.load(f))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rank"]:
        rank_main(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    else:
        fedprox_10, fedavg = launch("FedProx", 10.0), launch("FedAvg", 0.0)
        print("FedML MPI FedProx, fedprox_mu = 10:", fedprox_10)
        print("FedML MPI FedAvg                  :", fedavg)
        print("Li et al., mu = 10 (expected)     :", expected(10.0))
        print("FedAvg, mu = 0 (expected)         :", expected(0.0))
        assert np.allclose(fedavg, expected(0.0)), "FedML's MPI FedAvg is not McMahan et al.'s round"
        if np.allclose(fedprox_10, expected(10.0)):
            print("FedML's MPI FedProx applies the proximal term: no defect")
        else:
            assert np.allclose(fedprox_10, expected(0.0)), "FedProx is neither Li et al.'s round nor FedAvg's"
            print("DEFECT: fedprox_mu has no effect; FedML's MPI FedProx returns FedAvg's round")
