import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import { installForwarder } from "./lib/forward";

installForwarder(); // before anything calls window.go.app.WindowAPI

mount(App, { target: document.getElementById("app")! });
