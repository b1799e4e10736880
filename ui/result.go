package ui
